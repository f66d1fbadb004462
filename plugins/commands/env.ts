import {
  ApiError,
  type CommandInvocation,
  type DaemonSettings,
  type EventBus,
  type LayeredKey,
  type Logger,
  type McpServers,
  type PermissionRules,
  type Persona,
  type ProjectContext,
  type ProjectTrust,
  type Provider,
  type RegistryView,
  type SessionMeta,
  type SessionRecord,
  type SessionService,
  type SessionStore,
  type SlashCommand,
  type Theme,
  type ToolDefinition,
  type TurnService,
  type WorktreeService,
} from "../../core/index.js";
import type { Checkpoints } from "./checkpoints.js";
import type { ModelMemory, Prefs } from "./state.js";

/**
 * What the built-in commands use: the plugin's declared services (`ctx.deps`). Those other plugins may not provide
 * are read when a command runs (undefined when none does).
 */
export interface CommandEnv {
  sessions(): SessionService;
  store(): SessionStore;
  turns(): TurnService | undefined;
  project(): ProjectContext | undefined;
  settings(): DaemonSettings | undefined;
  trust(): ProjectTrust | undefined;
  mcp(): McpServers | undefined;
  worktrees(): WorktreeService | undefined;
  rules(): PermissionRules | undefined;
  tools: RegistryView<ToolDefinition>;
  personas: RegistryView<Persona>;
  themes: RegistryView<Theme>;
  providers: RegistryView<Provider>;
  commands: RegistryView<SlashCommand>;
  bus: EventBus;
  checkpoints: Checkpoints;
  prefs: Prefs;
  models: ModelMemory;
  log: Logger;
}

/** What a built-in command returns: a readable message plus structured data for clients (pickers, lists). */
export interface Reply {
  message: string;
  [field: string]: unknown;
}

export const RUNNING_MESSAGE = "Agent running — use /queue, /steer, or /abort";

export async function requireSession(env: CommandEnv, inv: CommandInvocation): Promise<SessionRecord> {
  if (!inv.sessionId) throw ApiError.badRequest("Command requires an active session");
  return await env.sessions().require(inv.sessionId);
}

export function requireTurns(env: CommandEnv): TurnService {
  const t = env.turns();
  if (!t) throw ApiError.badRequest("The agent loop is not loaded in this daemon");
  return t;
}

export function assertIdle(env: CommandEnv, sessionId: string): void {
  if (env.turns()?.status(sessionId) === "running") throw ApiError.conflict(RUNNING_MESSAGE, { code: "agent_running" });
}

/** Sets (or, with undefined, removes) keys of the session's meta; persisted and announced. */
export async function setMeta(env: CommandEnv, id: string, patch: Partial<SessionMeta>): Promise<SessionRecord> {
  const rec = await env.sessions().require(id);
  const meta: SessionMeta = { ...rec.meta, ...patch };
  for (const k of Object.keys(patch) as Array<keyof SessionMeta>) if (patch[k] === undefined) delete meta[k];
  return await env.sessions().update(id, { meta });
}

/** The working directory a command looks at: the session's, else the daemon's default. */
export async function cwdOf(env: CommandEnv, inv: CommandInvocation): Promise<string> {
  if (inv.sessionId) return (await env.sessions().require(inv.sessionId)).cwd;
  return env.settings()?.defaultCwd ?? process.cwd();
}

/** The provider a session uses (the loop's rule: `meta.provider` when registered, else the first one). */
export function providerOf(env: CommandEnv, rec: SessionRecord | undefined): Provider | undefined {
  const wanted = rec?.meta.provider;
  return (wanted ? env.providers.get(wanted) : undefined) ?? env.providers.list()[0];
}

/** The daemon's settings (global commands change them); 400 when the host provides none. */
export function requireSettings(env: CommandEnv): DaemonSettings {
  const s = env.settings();
  if (!s) throw ApiError.badRequest("Daemon settings are not available");
  return s;
}

const ENV_NAMES: Partial<Record<LayeredKey, string>> = {
  "provider.baseURL": "OPENAI_BASE_URL",
  "provider.apiKey": "OPENAI_API_KEY",
  "provider.model": "AGENTD_MODEL",
};

/** " (saved; the environment variable X overrides it)" when an env var wins over the saved value, else "". */
export function envNote(env: CommandEnv, key: LayeredKey): string {
  const s = env.settings();
  if (!s?.envOverrides().includes(key)) return "";
  return ` (saved; the environment variable ${ENV_NAMES[key] ?? "of this launch"} overrides it until the daemon restarts without it)`;
}

export function words(args: string): string[] {
  return args.split(/\s+/).filter(Boolean);
}

export function usage(text: string): ApiError {
  return ApiError.badRequest(`Usage: ${text}`);
}
