import { isAbsolute, join } from "node:path";
import {
  definePlugin,
  EventBusToken,
  optional,
  ProjectTrustToken,
  SessionServiceToken,
  SessionStoreToken,
  T,
  WorktreeServiceToken,
} from "../../core/index.js";
import { worktreeRoutes } from "./routes/index.js";
import { registryFile, Worktrees } from "./service.js";

const OptionsSchema = T.Object(
  {
    root: T.Optional(
      T.String({
        minLength: 1,
        maxLength: 4096,
        description: "Absolute directory the session worktrees are made in (default <home>/worktrees)",
      }),
    ),
  },
  { additionalProperties: false },
);

const states = new WeakMap<object, Worktrees>();

/**
 * A git worktree per session: `POST /sessions {worktree}`, `/worktree new|merge|discard` and their routes, a
 * worktree of its own for the fork of a worktree session, removal with the session and after a crash.
 */
export default definePlugin({
  manifest: {
    id: "worktrees",
    version: "1.0.0",
    description: "A git worktree per session: create, merge, discard, fork; cleaned up with the session",
    provides: [WorktreeServiceToken.id],
    capabilities: ["routes", "storage", "filesystem", "process"],
    configSchema: OptionsSchema,
  },
  deps: {
    bus: EventBusToken,
    sessions: SessionServiceToken,
    store: SessionStoreToken,
    trust: optional(ProjectTrustToken),
  },
  register(ctx) {
    const configured = ctx.options.root;
    if (configured !== undefined && !isAbsolute(configured)) {
      throw new Error(`pluginOptions.worktrees.root must be an absolute path: ${configured}`);
    }
    const { deps } = ctx;
    const bus = deps.bus;
    const sessions = () => deps.sessions;
    const worktrees = new Worktrees({
      root: configured ?? join(ctx.home, "worktrees"),
      file: registryFile(ctx.dataDir()),
      sessions,
      store: () => deps.store,
      trust: () => deps.trust,
      runHook: async (sessionId, worktree) => {
        const work: Array<Promise<unknown>> = [];
        bus.emit({ type: "worktree.created", sessionId, worktree, waitUntil: (p) => void work.push(p) });
        await Promise.allSettled(work);
      },
      log: ctx.log,
    });
    states.set(ctx, worktrees);
    ctx.services.provide(WorktreeServiceToken, worktrees);
    for (const route of worktreeRoutes(worktrees)) ctx.routes.add(route);
  },
  async start(ctx) {
    const worktrees = states.get(ctx);
    if (!worktrees) return;
    const removed = await worktrees.cleanup();
    if (removed) ctx.log.info({ removed }, "removed the worktrees of sessions that no longer exist");
  },
});
