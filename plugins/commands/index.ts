import { join } from "node:path";
import {
  CommandRegistryToken,
  definePlugin,
  EventBusToken,
  McpServersToken,
  optional,
  PermissionRulesToken,
  PersonaRegistryToken,
  type PluginContext,
  ProjectContextToken,
  ProjectTrustToken,
  ProviderRegistryToken,
  SessionServiceToken,
  SessionStoreToken,
  SettingsToken,
  T,
  ThemeRegistryToken,
  ToolRegistryToken,
  TurnManagerToken,
  WorktreeServiceToken,
} from "../../core/index.js";
import { type CheckpointOptions, Checkpoints, DEFAULT_CHECKPOINT_OPTIONS } from "./checkpoints.js";
import { type CommandEnv, providerOf } from "./env.js";
import { commandRoutes } from "./routes/index.js";
import { slashCommands } from "./slash/index.js";
import { ModelMemory, Prefs } from "./state.js";

export { type CheckpointOptions, Checkpoints, DEFAULT_CHECKPOINT_OPTIONS, type UndoOutcome } from "./checkpoints.js";
export { type CommandResponse, executeCommand, parseCommandLine } from "./dispatch.js";
export { parseGoal } from "./slash/goal.js";
export { type Suggestion, suggest } from "./suggest.js";

const OptionsSchema = T.Object(
  {
    checkpoints: T.Optional(
      T.Object(
        {
          enabled: T.Optional(T.Boolean({ description: "Take file checkpoints for /undo (default true)" })),
          maxFiles: T.Optional(
            T.Integer({ minimum: 1, description: `Default ${DEFAULT_CHECKPOINT_OPTIONS.maxFiles}` }),
          ),
          maxFileBytes: T.Optional(
            T.Integer({ minimum: 0, description: `Default ${DEFAULT_CHECKPOINT_OPTIONS.maxFileBytes}` }),
          ),
          timeoutMs: T.Optional(
            T.Integer({ minimum: 100, description: `Default ${DEFAULT_CHECKPOINT_OPTIONS.timeoutMs}` }),
          ),
          keep: T.Optional(
            T.Integer({ minimum: 1, maximum: 1000, description: `Default ${DEFAULT_CHECKPOINT_OPTIONS.keep}` }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * Slash commands: the built-in set (/undo with per-turn file checkpoints, /fork, /steer, /queue, /goal, modes,
 * settings and listings), the command routes, and composer suggestions. Other plugins add commands to the same
 * registry (`ctx.commands.add`), and they are served by the same routes.
 */
export default definePlugin({
  manifest: {
    id: "commands",
    version: "1.0.0",
    description:
      "Slash commands (/undo with file checkpoints, /fork, /steer, /queue, /goal, /model, ...), GET /commands and /suggest",
    capabilities: ["routes", "secrets", "storage", "filesystem", "process"],
    configSchema: OptionsSchema,
  },
  deps: {
    sessions: SessionServiceToken,
    store: SessionStoreToken,
    settings: SettingsToken,
    tools: ToolRegistryToken,
    providers: ProviderRegistryToken,
    personas: PersonaRegistryToken,
    themes: ThemeRegistryToken,
    commands: CommandRegistryToken,
    bus: EventBusToken,
    turns: optional(TurnManagerToken),
    project: optional(ProjectContextToken),
    trust: optional(ProjectTrustToken),
    mcp: optional(McpServersToken),
    worktrees: optional(WorktreeServiceToken),
    rules: optional(PermissionRulesToken),
  },
  register(ctx) {
    const { deps } = ctx;
    const opts = (ctx.options.checkpoints ?? {}) as Partial<CheckpointOptions>;
    const checkpointOpts: CheckpointOptions = { ...DEFAULT_CHECKPOINT_OPTIONS, ...opts };
    const sessions = () => deps.sessions;
    const { tools, providers } = deps;
    const checkpoints = new Checkpoints(
      () => join(ctx.dataDir(), "checkpoints"),
      checkpointOpts,
      ctx.log,
      (id, message) => sessions().publish(id, { type: "notice", message }),
    );
    const env: CommandEnv = {
      sessions,
      store: () => deps.store,
      turns: () => deps.turns,
      project: () => deps.project,
      settings: () => deps.settings,
      trust: () => deps.trust,
      mcp: () => deps.mcp,
      worktrees: () => deps.worktrees,
      rules: () => deps.rules,
      tools,
      personas: deps.personas,
      themes: deps.themes,
      providers,
      commands: deps.commands,
      bus: deps.bus,
      checkpoints,
      prefs: new Prefs(() => join(ctx.dataDir(), "prefs.json"), ctx.log),
      models: new ModelMemory(() => providerOf(env, undefined)),
      log: ctx.log,
    };
    for (const cmd of slashCommands(env)) ctx.commands.add(cmd);
    for (const route of commandRoutes(env)) ctx.routes.add(route);

    // A turn starts with its user message; its snapshot is taken before its first file-changing tool runs.
    ctx.events.on("message.appended", ({ sessionId, message, opensTurn }) => {
      if (opensTurn) checkpoints.begin(sessionId, message.seq);
    });
    ctx.events.on("tool.before", (e) => {
      const tool = tools.get(e.tool);
      if (!tool || tool.readOnly) return;
      e.waitUntil(checkpoints.snapshot(e.sessionId, e.cwd));
    });
    ctx.events.on("session.deleted", ({ sessionId }) => void checkpoints.forget(sessionId));
    running.set(ctx, checkpoints);
  },
  async stop(ctx) {
    // Snapshots and state writes finish before the daemon reports itself stopped (nothing writes after that).
    await running.get(ctx)?.settled();
  },
});

/** The plugin object is shared by every daemon in the process; its checkpoints belong to one registration. */
const running = new WeakMap<PluginContext, Checkpoints>();
