import { ApiError, type SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession, requireSettings, setMeta } from "../env.js";

export const TURN_CAP_MIN = 10;

export const TURN_CAP_MAX = 10_000;

const DEFAULT_TURN_CAP = 500;

function configuredCap(env: CommandEnv): number {
  const v = env.settings()?.maxTurnIterations;
  return typeof v === "number" ? v : DEFAULT_TURN_CAP;
}

export function turnCapCommand(env: CommandEnv): SlashCommand {
  return {
    name: "turn-cap",
    description: `Show or set the per-turn iteration cap (${TURN_CAP_MIN}..${TURN_CAP_MAX}, or reset): this session's, or without a session the default`,
    takesArgs: true,
    global: true,
    run: async (inv): Promise<Reply> => {
      const fallback = configuredCap(env);
      const arg = inv.args.toLowerCase();
      const parse = (): number | "reset" => {
        if (arg === "reset" || arg === "off" || arg === "default") return "reset";
        const n = /^\d+$/.test(arg) ? Number(arg) : Number.NaN;
        if (!Number.isInteger(n) || n < TURN_CAP_MIN || n > TURN_CAP_MAX) {
          throw ApiError.badRequest(
            `The turn cap must be an integer from ${TURN_CAP_MIN} to ${TURN_CAP_MAX}, or reset`,
          );
        }
        return n;
      };
      if (!inv.sessionId) {
        // The daemon-wide default (settings.json), for every session without a cap of its own.
        if (!arg) {
          return {
            message: `Default per-turn iteration cap: ${fallback}`,
            turnCap: null,
            default: fallback,
            effective: fallback,
          };
        }
        const value = parse();
        await requireSettings(env).update({ maxTurnIterations: value === "reset" ? null : value });
        const now = configuredCap(env);
        return {
          message:
            value === "reset"
              ? `Default per-turn iteration cap reset (${now})`
              : `Default per-turn iteration cap set to ${now} (applies from the next model call)`,
          turnCap: null,
          default: now,
          effective: now,
        };
      }
      const rec = await requireSession(env, inv);
      if (!arg) {
        const own = typeof rec.meta.turnCap === "number" ? rec.meta.turnCap : null;
        const effective = own ?? fallback;
        return {
          message: `Per-turn iteration cap: ${effective}${own === null ? " (default)" : ""}`,
          turnCap: own,
          default: fallback,
          effective,
        };
      }
      const value = parse();
      if (value === "reset") {
        await setMeta(env, rec.id, { turnCap: undefined });
        return {
          message: `Per-turn iteration cap reset to the default (${fallback})`,
          turnCap: null,
          default: fallback,
          effective: fallback,
        };
      }
      await setMeta(env, rec.id, { turnCap: value });
      return {
        message: `Per-turn iteration cap set to ${value} (applies from the next model call)`,
        turnCap: value,
        default: fallback,
        effective: value,
      };
    },
  };
}
