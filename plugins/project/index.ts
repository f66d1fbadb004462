import {
  DocumentStoreToken,
  definePlugin,
  HostInfoToken,
  optional,
  PersonaRegistryToken,
  type PluginContext,
  ProjectContextToken,
  ProjectTrustToken,
  SandboxToken,
  SessionServiceToken,
  T,
} from "../../core/index.js";
import { ProjectResources } from "./context.js";
import { findProjectRoot } from "./paths.js";
import { projectRoutes } from "./routes.js";
import { skillTool } from "./skill-tool.js";
import { ToolHookRunner } from "./tool-hooks.js";
import { TrustStore } from "./trust.js";
import { trustPrompt } from "./trust-prompt.js";

export { ProjectResources } from "./context.js";
export { TrustStore } from "./trust.js";

const OptionsSchema = T.Object(
  {
    hooks: T.Optional(
      T.Object(
        {},
        { additionalProperties: true, description: "Global hooks, same shape as <project>/.agentd/hooks.json" },
      ),
    ),
  },
  { additionalProperties: false },
);

interface State {
  trust: TrustStore;
  resources: ProjectResources;
  setDirectories(d: ReadonlyMap<string, string>): void;
}
const states = new WeakMap<PluginContext, State>();

/** Roots are looked up on every model call: remember them (bounded; cleared on reload). */
function cachedRoots(): { rootOf: (cwd: string) => string; clear: () => void } {
  const cache = new Map<string, string>();
  return {
    rootOf(cwd) {
      let root = cache.get(cwd);
      if (root === undefined) {
        root = findProjectRoot(cwd);
        if (cache.size >= 1000) cache.clear();
        cache.set(cwd, root);
      }
      return root;
    },
    clear: () => cache.clear(),
  };
}

/**
 * Project trust and resources: trust decisions per project root, global resources from the daemon home and
 * project ones from `<project>/.agentd` (trusted projects only), the system-prompt instructions, the `skill`
 * tool, and command hooks around tool calls.
 */
export default definePlugin({
  manifest: {
    id: "project",
    version: "1.0.0",
    description: "Project trust; global and project personas, skills, rules, context files and tool hooks",
    provides: [ProjectTrustToken.id, ProjectContextToken.id],
    requires: ["session-store"],
    // "secrets": the trust decisions are a document of the store that also holds the settings.
    capabilities: ["routes", "filesystem", "process", "secrets"],
    configSchema: OptionsSchema,
  },
  deps: {
    host: HostInfoToken,
    documents: DocumentStoreToken,
    sessions: SessionServiceToken,
    personas: PersonaRegistryToken,
    sandbox: optional(SandboxToken),
  },
  register(ctx) {
    const settings = ctx.deps.host;
    const roots = cachedRoots();
    const sessions = () => ctx.deps.sessions;
    // Every session's directory (read at start, kept current by the session service).
    let directories: ReadonlyMap<string, string> = new Map();
    /** Ids of the sessions that currently show a trust prompt. */
    const prompted = (): Set<string> => {
      const svc = sessions();
      const ids = new Set<string>();
      for (const [id, cwd] of directories) if (svc.projectTrust(cwd)) ids.add(id);
      return ids;
    };
    /** Announces the sessions' summaries again (their trust prompt appeared or went away). */
    const announce = (ids: Iterable<string>) => {
      const svc = sessions();
      for (const id of ids) {
        svc
          .find(id)
          .then((rec) => rec && svc.announce("session_update", rec))
          .catch((err) => ctx.log.warn({ err, sessionId: id }, "could not announce a trust change"));
      }
    };
    let promptedBefore = new Set<string>();
    // Read at start: the documents may be kept by the storage plugin.
    const trust = new TrustStore(() => ctx.deps.documents, roots.rootOf, ctx.log);
    ctx.onDispose(() => trust.close());
    const resources = new ProjectResources({
      home: ctx.home,
      trust,
      registry: ctx.deps.personas,
      defaultPersona: () => settings.defaultPersona,
      globalHooks: () => [settings.config("hooks"), ctx.options.hooks].filter((v) => v !== undefined),
      log: ctx.log,
      onReload: () => {
        promptedBefore = prompted();
        roots.clear();
      },
      afterReload: () => {
        // Resources appear or go away on a re-scan: announce sessions whose trust prompt did.
        const now = prompted();
        announce([...directories.keys()].filter((id) => now.has(id) !== promptedBefore.has(id)));
      },
    });
    states.set(ctx, { trust, resources, setDirectories: (d) => (directories = d) });
    ctx.services.provide(ProjectTrustToken, trust);
    ctx.services.provide(ProjectContextToken, resources);
    ctx.onDispose(trust.onChange((root) => resources.invalidate(root)));
    for (const route of projectRoutes(trust, resources)) ctx.routes.add(route);
    ctx.tools.add(skillTool(() => resources));

    const hooks = new ToolHookRunner({
      hooks: (cwd) => resources.hooks(cwd),
      projectRoot: (cwd) => trust.projectRoot(cwd),
      publish: (id, e) => sessions().publish(id, e),
      log: ctx.log,
      sandbox: () => ctx.deps.sandbox,
    });
    ctx.events.on("tool.before", (e) => {
      const matching = hooks.matching("PreToolUse", e);
      if (matching.length) e.waitUntil(hooks.run("PreToolUse", matching, e));
    });
    ctx.events.on("worktree.created", (e) => e.waitUntil(hooks.runWorktree(e.sessionId, e.worktree)));
    ctx.events.on("tool.after", (e) => {
      const matching = hooks.matching("PostToolUse", e);
      if (matching.length) e.waitUntil(hooks.run("PostToolUse", matching, e, e.result));
    });

    // A session opening in an undecided project with local resources asks its clients for a trust decision: at
    // creation, and at its first turn in this daemon's life (sessions from before a restart). A trusted project
    // whose plugins changed asks again at the session's next turn (once per change: the prompt's content is kept).
    const asked = new Map<string, string>();
    const askTrust = (sessionId: string, cwd: string) => {
      const prompt = trustPrompt(trust, resources, cwd);
      const key = prompt ? JSON.stringify(prompt.resources) : "";
      const before = asked.get(sessionId);
      asked.set(sessionId, key);
      if (!prompt || before === key) return;
      sessions().publish(sessionId, {
        type: "project_trust_required",
        path: prompt.path,
        cwd,
        resources: prompt.resources,
      });
    };
    ctx.events.on("session.created", ({ session }) => askTrust(session.id, session.cwd));
    ctx.events.on("turn.started", ({ sessionId, cwd }) => {
      if (!asked.has(sessionId) || trust.decision(cwd)?.trusted) askTrust(sessionId, cwd);
    });
    ctx.events.on("session.deleted", ({ sessionId }) => asked.delete(sessionId));

    // A decision (either way) clears the prompt of every session of that project: one session_update each, on its
    // own stream and on the all-sessions feed.
    ctx.onDispose(
      trust.onChange((root) => {
        announce([...directories].filter(([, cwd]) => trust.projectRoot(cwd) === root).map(([id]) => id));
      }),
    );
  },
  async start(ctx) {
    const state = states.get(ctx);
    if (!state) return;
    await state.trust.load();
    const svc = ctx.deps.sessions;
    // Every session's directory, read off the start-up path (a home with many sessions must not delay `healthy`).
    svc
      .directories()
      .then((d) => state.setDirectories(d))
      .catch((err) => ctx.log.warn({ err }, "could not read the sessions' directories"));
  },
});
