/**
 * The agentd plugin SDK: what the `agentd` package exports (package.json "exports"), and all a plugin needs. The
 * `define*` functions, the service tokens (each typed by an interface), the contribution types and the helpers that
 * plugins use instead of copies. Engine classes (the turn loop, the session layer's implementation, the event log,
 * the registries) stay internal: built-in plugins may import them from `core/index.ts`, third-party plugins cannot.
 * docs/sdk-api.md lists every export with its type (`npm run sdk:report` regenerates it; a test fails when stale).
 */

export { type Static, type TSchema, Type as T } from "@sinclair/typebox";
// Helpers.
export {
  ConfinedDir,
  mkdirInside,
  openDirInside,
  openInside,
  PathEscapeError,
  readFileInside,
  withDirInside,
  withFileInside,
  writeFileInside,
} from "./confined-fs.js";
// Contributions: tools, routes, personas, themes, commands, providers.
export type {
  ChatMessage,
  CommandInvocation,
  CommandReply,
  CommandResult,
  ConfirmationRequest,
  EditorFs,
  ModelInfo,
  Persona,
  Provider,
  ProviderDelta,
  ProviderRequest,
  Question,
  QuestionAnswer,
  QuestionOption,
  SlashCommand,
  Theme,
  ToolContext,
  ToolDefinition,
  ToolError,
  ToolErrorCode,
  ToolImage,
  ToolResult,
} from "./contributions.js";
export {
  type DisplayMessage,
  type DisplayToolCall,
  type MessageImages,
  MessageImagesToken,
  type MessageImageUrl,
} from "./display.js";
export { type Disposable, DisposableStore, toDisposable } from "./disposable.js";
// The storage contract (a storage plugin implements it): every export of store.ts, and the documents.
export { type DocumentStore, DocumentStoreToken } from "./documents.js";
export { ApiError, type ApiErrorExtra, type ErrorCode, errorMessage, isApiError } from "./errors.js";
// Events: the bus's lifecycle events and the sessions' wire events.
export type {
  AppendedMessage,
  BusEvent,
  BusEvents,
  EndReason,
  EventBus,
  EventHandler,
  ToolHookEvent,
  ToolHookVerdict,
} from "./events.js";
export { writePrivateFile, writePrivateFileAsync } from "./files.js";
export { type GitOptions, type GitResult, git } from "./git.js";
export { type Logger, silentLogger } from "./logger.js";
// Services of the built-in plugins.
export {
  type McpManagerService,
  McpManagerToken,
  type McpScope,
  type McpServerStatus,
  type McpServers,
  McpServersToken,
  type McpState,
} from "./mcp.js";
export { isInside, resolveInside } from "./paths.js";
// Plugins and their services.
export {
  CAPABILITIES,
  type Capability,
  type ContributionPoint,
  type DepsOf,
  type DepsSpec,
  definePlugin,
  type OptionalDep,
  type OptionsOf,
  optional,
  type Plugin,
  type PluginContext,
  type PluginDefinition,
  type PluginManifest,
  type ServiceAccess,
} from "./plugin.js";
export {
  type ProjectContext,
  ProjectContextToken,
  type ProjectResourceList,
  type ProjectTrust,
  ProjectTrustToken,
  type ProjectView,
  type Skill,
  type TrustRecord,
} from "./project.js";
// Host services.
export {
  CommandRegistryToken,
  type DaemonSettings,
  EventBusToken,
  type HostInfo,
  HostInfoToken,
  type LayeredKey,
  LoggerToken,
  type PermissionMode,
  PersonaRegistryToken,
  ProviderRegistryToken,
  RouteRegistryToken,
  type SettingSource,
  SettingsToken,
  ThemeRegistryToken,
  ToolRegistryToken,
  type UserSettings,
  type UserSettingsPatch,
} from "./registries.js";
export type { Owned, RegistryView } from "./registry.js";
export {
  type AnyRoute,
  defineRoute,
  type HttpMethod,
  type Principal,
  type RepliesOf,
  type ResponseSpec,
  type RouteDefinition,
  type RouteReply,
  type RouteRequest,
  type RouteResponses,
  type RouteResult,
  type SseStream,
} from "./routes.js";
export {
  type NetworkPolicy,
  type NewRule,
  type PermissionRule,
  type PermissionRules,
  PermissionRulesToken,
  type RuleAction,
  type RuleScope,
  type Sandbox,
  type SandboxRequest,
  type SandboxStatus,
  SandboxToken,
} from "./sandbox.js";
export { ErrorSchema, OkSchema, SessionIdParams } from "./schemas.js";
// Sessions, their storage and their turns.
export {
  type CreateSessionInput,
  type SessionHistory,
  type SessionService,
  SessionServiceToken,
  type SessionView,
} from "./session-service.js";
export {
  emptyUsage,
  type MessageContent,
  type MessageRole,
  type NewMessage,
  type ProjectResourceNames,
  type ProjectTrustPrompt,
  type SessionMeta,
  type SessionMode,
  type SessionRecord,
  type SessionStatus,
  type SessionSummary,
  type SessionTodo,
  type SessionTurnError,
  type SessionUsage,
  type SessionWaiting,
  type StoredEvent,
  type StoredMessage,
  type StoredToolCall,
} from "./session-types.js";
export type { SessionPatch, SessionWriter } from "./session-writer.js";
export { type CommandClassification, type ShellClassifier, ShellClassifierToken } from "./shell.js";
export * from "./store.js";
export { createToken, type ServiceToken } from "./tokens.js";
export { defineTool, ToolFailure, type ToolSpec, toolError } from "./tools.js";
export {
  type ChatInput,
  type ChatOutcome,
  type TurnController,
  TurnControllerToken,
  TurnManagerToken,
  type TurnService,
} from "./turns.js";
export {
  type WebSearchBackend,
  type WebSearchRegistry,
  WebSearchRegistryToken,
  type WebSearchResult,
} from "./web-search.js";
export type { SessionEvent, SessionEventOf, SessionEventType } from "./wire-events.js";
export {
  type SessionWorktrees,
  type WorktreeDiff,
  type WorktreeInfo,
  type WorktreeMergeOutcome,
  type WorktreeRequest,
  type WorktreeService,
  WorktreeServiceToken,
} from "./worktrees.js";
