import { ApiError, type CommandInvocation, type SlashCommand } from "../../../core/index.js";
import { type CommandEnv, type Reply, requireSession, requireSettings, setMeta, usage } from "../env.js";

/** `/permissions rules` (those that can apply in the session's directory) and `/permissions revoke <id>`. */
async function ruleCommand(env: CommandEnv, inv: CommandInvocation, sub: string, arg: string): Promise<Reply> {
  const rules = env.rules();
  if (!rules) throw ApiError.conflict("Approval rules are not available (the permissions plugin is not loaded)");
  if (sub === "revoke") {
    if (!arg) throw usage("/permissions revoke <rule id>");
    await rules.remove(arg);
    return { message: `Revoked rule ${arg}`, revoked: arg };
  }
  const cwd = inv.sessionId ? (await env.sessions().require(inv.sessionId)).cwd : undefined;
  const list = rules.list(cwd);
  const lines = list.map(
    (r) =>
      `${r.id}  ${r.action.padEnd(5)} ${r.pattern}  (${r.scope}${r.project ? ` ${r.project}` : ""}${r.source === "config" ? ", config.json" : ""})`,
  );
  return {
    message: list.length
      ? `Approval rules (deny beats ask beats allow):\n${lines.join("\n")}`
      : "No approval rules yet. Answer a confirmation with an 'always' choice to add one.",
    rules: list,
  };
}

export function permissionsCommand(env: CommandEnv): SlashCommand {
  return {
    name: "permissions",
    description:
      "Show or set how risky commands are handled: default (ask) or bypass (never ask); `rules` lists the " +
      "approval rules, `revoke <id>` removes one",
    takesArgs: true,
    global: true,
    run: async (inv): Promise<Reply> => {
      const [sub, ...rest] = inv.args.trim().split(/\s+/);
      if (sub === "rules" || sub === "revoke") return ruleCommand(env, inv, sub, rest.join(" "));
      const arg = inv.args.toLowerCase();
      if (arg && arg !== "default" && arg !== "bypass") throw usage("/permissions [default|bypass|rules|revoke <id>]");
      if (!inv.sessionId) {
        // The mode of new sessions (settings.json); existing sessions keep theirs.
        if (arg) await requireSettings(env).update({ permissionMode: arg === "bypass" ? "bypass" : "default" });
        const mode = env.settings()?.permissionMode ?? "default";
        return {
          message:
            mode === "bypass"
              ? `${arg ? "New sessions will start" : "New sessions start"} in bypass mode (risky commands run without confirmation)`
              : `${arg ? "New sessions will start" : "New sessions start"} in default mode (risky commands ask for confirmation)`,
          permissionMode: mode,
          options: ["default", "bypass"],
        };
      }
      const rec = await requireSession(env, inv);
      if (!arg) {
        const mode = rec.meta.permissionMode === "bypass" ? "bypass" : "default";
        return { message: `Permission mode: ${mode}`, permissionMode: mode, options: ["default", "bypass"] };
      }
      await setMeta(env, rec.id, { permissionMode: arg === "bypass" ? "bypass" : undefined });
      return {
        message:
          arg === "bypass"
            ? "Permission mode: bypass (risky commands run without confirmation)"
            : "Permission mode: default (risky commands ask for confirmation)",
        permissionMode: arg,
        options: ["default", "bypass"],
      };
    },
  };
}
