import type { Stats } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { withDirInside } from "../confined-fs.js";

const DIRS_AT_ONCE = 16;

async function rawNames(dir: string): Promise<Map<string, Buffer>> {
  const names = await readdir(dir, { encoding: "buffer" }).catch(() => [] as Buffer[]);
  return new Map(names.map((b) => [b.toString("utf8"), b]));
}

/**
 * Confirms listed paths before anything about them is shown: each parent directory is opened and verified inside
 * `root` (core/confined-fs), and the entry is lstat'ed through that descriptor. A path whose directory was swapped
 * for a link to somewhere else while ripgrep (which reads by path) listed it, or that is gone, is dropped. Returns
 * the lstat of every confirmed path, in the order given.
 */
export async function confirmInside(root: string, rels: readonly string[]): Promise<Array<[string, Stats]>> {
  const byDir = new Map<string, string[]>();
  for (const rel of rels) {
    const cut = rel.lastIndexOf("/");
    const dir = cut === -1 ? "" : rel.slice(0, cut);
    const names = byDir.get(dir) ?? [];
    if (names.length === 0) byDir.set(dir, names);
    names.push(rel.slice(cut + 1));
  }
  const found = new Map<string, Stats>();
  const dirs = [...byDir];
  // A few directories open at a time: a long list must not run out of file descriptors.
  for (let i = 0; i < dirs.length; i += DIRS_AT_ONCE) {
    await Promise.all(
      dirs.slice(i, i + DIRS_AT_ONCE).map(([dir, names]) =>
        withDirInside([root], dir === "" ? root : path.join(root, dir), async (d) => {
          // A name that is not UTF-8 reaches JavaScript with U+FFFD in it: it is found again by its raw bytes.
        const raw = names.some((n) => n.includes("\uFFFD")) ? await rawNames(d.path) : undefined;
        const at = (n: string) => {
          const bytes = raw?.get(n);
          return bytes ? Buffer.concat([Buffer.from(`${d.path}/`), bytes]) : d.at(n);
        };
        const stats = await Promise.all(names.map((n) => lstat(at(n)).catch(() => undefined)));
          stats.forEach((st, i) => {
            const name = names[i] as string;
            if (st) found.set(dir === "" ? name : `${dir}/${name}`, st);
          });
        }).catch(() => undefined),
      ),
    );
  }
  const out: Array<[string, Stats]> = [];
  for (const rel of rels) {
    const st = found.get(rel);
    if (st) out.push([rel, st]);
  }
  return out;
}
