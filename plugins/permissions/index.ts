import { statSync } from "node:fs";
import path from "node:path";
import {
  ApiError,
  DocumentStoreToken,
  definePlugin,
  HostInfoToken,
  type NewRule,
  optional,
  type PermissionRule,
  type PermissionRules,
  PermissionRulesToken,
  type PermissionsConfig,
  ProjectTrustToken,
  SessionServiceToken,
} from "../../core/index.js";
import { matchesPattern, type Pattern, parsePattern } from "./pattern.js";
import { permissionRoutes } from "./routes/index.js";
import { SavedRules } from "./store.js";

/** Each loaded plugin's saved rules, read at its start. */
const saved = new WeakMap<object, SavedRules>();

const STRENGTH: Record<PermissionRule["action"], number> = { deny: 0, ask: 1, allow: 2 };

/**
 * Remembered decisions about commands: the rules the user saves while answering a confirmation or through
 * /permissions/rules (kept in the daemon home, so they hold whether or not the project is trusted), and the rules
 * of `permissions.rules` in config.json. Precedence: deny beats ask beats allow, whatever their source or scope.
 */
export default definePlugin({
  manifest: {
    id: "permissions",
    version: "1.0.0",
    description: "Approval rules for the agent's commands: saved decisions and configured rules, deny > ask > allow",
    // "secrets": the saved rules are a document of the store that also holds the settings.
    capabilities: ["routes", "storage", "secrets"],
    provides: [PermissionRulesToken.id],
  },
  deps: {
    host: HostInfoToken,
    documents: DocumentStoreToken,
    trust: optional(ProjectTrustToken),
    sessions: optional(SessionServiceToken),
  },
  register(ctx) {
    // Read at start: the documents may be kept by the storage plugin, which registers in its own time.
    const file = new SavedRules(() => ctx.deps.documents);
    saved.set(ctx, file);
    ctx.onDispose(() => file.close());
    const projectOf = (cwd: string) => ctx.deps.trust?.projectRoot(cwd) ?? path.resolve(cwd);
    const configured = ((ctx.deps.host.config("permissions") ?? {}) as PermissionsConfig).rules ?? [];
    const configRules: PermissionRule[] = configured.map((r, i) => {
      parsePattern(r.pattern); // validated at start: a bad configured rule stops the plugin with its reason
      return {
        id: `config-${i + 1}`,
        scope: r.project ? "project" : "global",
        action: r.action,
        pattern: r.pattern,
        tool: "bash",
        ...(r.project ? { project: projectOf(path.resolve(r.project)) } : {}),
        source: "config",
        createdAt: new Date(0).toISOString(),
      };
    });
    const parsed = new Map<string, Pattern>();
    const patternOf = (r: PermissionRule) => {
      const known = parsed.get(r.pattern);
      if (known) return known;
      const p = parsePattern(r.pattern);
      parsed.set(r.pattern, p);
      return p;
    };
    const all = () => [...configRules, ...file.list()];
    const applies = (r: PermissionRule, project: string | undefined, sessionId: string | undefined) =>
      r.scope === "global" ||
      (r.scope === "project" && project !== undefined && r.project === project) ||
      (r.scope === "session" && sessionId !== undefined && r.sessionId === sessionId);

    const rules: PermissionRules = {
      matching(argv, where) {
        const project = projectOf(where.cwd);
        return all()
          .filter((r) => applies(r, project, where.sessionId))
          .filter((r) => {
            try {
              return matchesPattern(patternOf(r), argv);
            } catch {
              return false;
            }
          })
          .sort((a, b) => STRENGTH[a.action] - STRENGTH[b.action]);
      },
      async add(input: NewRule) {
        const pattern = input.pattern.trim();
        parsePattern(pattern);
        const base = { action: input.action, pattern, tool: "bash" as const, scope: input.scope };
        const extra = input.unsandboxed ? { unsandboxed: true } : {};
        if (input.scope === "project") {
          if (!input.cwd) throw ApiError.badRequest("a project rule needs cwd (a directory of the project)");
          if (!isDirectory(input.cwd)) throw ApiError.badRequest(`cwd ${input.cwd} is not a directory`);
          return file.add({ ...base, ...extra, project: projectOf(path.resolve(input.cwd)) });
        }
        if (input.scope === "session") {
          if (!input.sessionId) throw ApiError.badRequest("a session rule needs sessionId");
          await ctx.deps.sessions?.require(input.sessionId);
          return file.add({ ...base, ...extra, sessionId: input.sessionId });
        }
        return file.add({ ...base, ...extra });
      },
      list(cwd) {
        if (cwd === undefined) return all();
        if (!isDirectory(cwd)) throw ApiError.badRequest(`cwd ${cwd} is not a directory`);
        const project = projectOf(path.resolve(cwd));
        return all().filter((r) => r.scope !== "project" || r.project === project);
      },
      async remove(id) {
        if (configRules.some((r) => r.id === id)) {
          throw ApiError.conflict(`Rule ${id} comes from config.json (permissions.rules); edit the file to change it`, {
            code: "rule_from_config",
          });
        }
        if (!(await file.remove((r) => r.id === id))) throw ApiError.notFound(`No rule with id ${id}`);
      },
    };
    ctx.services.provide(PermissionRulesToken, Object.freeze(rules));
    for (const route of permissionRoutes(rules)) ctx.routes.add(route);
    ctx.events.on("session.deleted", ({ sessionId }) => {
      void file
        .remove((r) => r.scope === "session" && r.sessionId === sessionId)
        .catch((err) => ctx.log.warn({ err, sessionId }, "could not drop the rules of a deleted session"));
    });
  },
  async start(ctx) {
    await saved.get(ctx)?.load();
  },
});

function isDirectory(p: string): boolean {
  try {
    return path.isAbsolute(p) && statSync(p).isDirectory();
  } catch {
    return false;
  }
}
