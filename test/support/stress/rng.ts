/** A small seeded generator (mulberry32), so a failing stress run can be replayed with its seed. */
export interface Rng {
  next(): number;
  int(maxExclusive: number): number;
}

export function seededRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (max) => Math.floor(next() * max) };
}

/** The seed of a run: STRESS_SEED when given, else a fresh one (printed by the suites). */
export function runSeed(): number {
  const s = Number(process.env.STRESS_SEED);
  return Number.isSafeInteger(s) ? s : Math.floor(Math.random() * 2 ** 31);
}
