import { type Static, Type as T } from "@sinclair/typebox";
import { createToken } from "./tokens.js";

/*
 * The confinement of the agent's processes (the sandbox plugin provides it) and the user's remembered decisions
 * about commands (the permissions plugin provides them). Tools that start processes wrap them with `Sandbox.wrap`;
 * the bash tool asks `PermissionRules` before it asks the user.
 */

export type NetworkPolicy = "ask" | "allow" | "deny";

/** Config key `sandbox`: `"off"`, or how the sandbox confines. Documented in the README ("Permissions"). */
export const SandboxConfigSchema = T.Union([
  T.Literal("off"),
  T.Object(
    {
      network: T.Optional(T.Union([T.Literal("ask"), T.Literal("allow"), T.Literal("deny")])),
      writable: T.Optional(T.Array(T.String({ minLength: 1 }))),
      hidden: T.Optional(T.Array(T.String({ minLength: 1 }))),
      env: T.Optional(T.Array(T.String({ minLength: 1, pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }))),
      projects: T.Optional(
        T.Record(
          T.String({ minLength: 1 }),
          T.Object(
            { network: T.Optional(T.Union([T.Literal("ask"), T.Literal("allow"), T.Literal("deny")])) },
            { additionalProperties: false },
          ),
        ),
      ),
    },
    { additionalProperties: false },
  ),
]);
export type SandboxConfig = Static<typeof SandboxConfigSchema>;

/** `GET /server/status` → `sandbox`. */
export interface SandboxStatus {
  /** Commands run confined. */
  enabled: boolean;
  /** `bubblewrap` when confined; `none` when not (see `reason`); `off` when the config turned it off. */
  kind: "bubblewrap" | "none" | "off";
  /** The global network policy (a project may have its own). */
  network: NetworkPolicy;
  /** Directories writable besides the session's working directory and the private /tmp. */
  writable: string[];
  /** Why commands are not confined (no bwrap, user namespaces refused, the self-check failed, ...). */
  reason?: string;
}

/** What a confined process may do. */
export interface SandboxRequest {
  /** The program and its arguments (never a shell string). */
  argv: string[];
  cwd: string;
  /** The scrubbed environment it gets (see `Sandbox.env`). */
  env: NodeJS.ProcessEnv;
  /** Share the host's network. */
  network: boolean;
  /** Directories writable besides the configured ones; default `[cwd]`. Empty: nothing is writable but /tmp. */
  writable?: string[];
  /** The git directory of a writable repository is writable too (default true; plan mode: false). */
  gitWritable?: boolean;
}

export interface Sandbox {
  /** The state once the start-up self-check has run (commands wait for it). */
  ready(): Promise<SandboxStatus>;
  /** The state now (`reason: "checking"` while the self-check runs). */
  status(): SandboxStatus;
  /** The network policy for a directory's project (the per-project setting, else the global one). */
  networkPolicy(cwd: string): NetworkPolicy;
  /** The program to spawn for a request: bwrap and its arguments when confined, else the request as is. */
  wrap(req: SandboxRequest): { file: string; args: string[]; env: NodeJS.ProcessEnv; confined: boolean };
  /** The environment a confined process gets: no provider key, no AGENTD_*, nothing named like a secret. */
  env(base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /**
   * Whether an absolute, resolved path is hidden (it or one of its parents is on the list). With `cwd`, a hidden
   * directory that contains the working directory (a worktree under the daemon home) does not hide what is inside it.
   */
  isHidden(abs: string, cwd?: string): boolean;
}

export const SandboxToken = createToken<Sandbox>("sandbox");

/** Names of variables a confined process never gets: the daemon's own, and anything named like a secret. */
const SECRET_NAME =
  /^(OPENAI_API_KEY|AGENTD_.*|SSH_AUTH_SOCK|GPG_AGENT_INFO|KUBECONFIG|GOOGLE_APPLICATION_CREDENTIALS|AWS_.*)$|KEY$|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|_PAT$|_AUTH$|COOKIE|APIKEY|API_KEY|PRIVATE_KEY|ACCESS_KEY/i;

/**
 * The environment of the agent's processes: without the provider key, AGENTD_* and anything named like a secret
 * (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`...), except the names in `allow` (config `sandbox.env`). Applied
 * even with the sandbox off: a command's output reaches the transcript and the provider.
 */
export function commandEnv(base: NodeJS.ProcessEnv, allow: readonly string[] = []): NodeJS.ProcessEnv {
  const keep = new Set(allow);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) {
    if (v !== undefined && (keep.has(k) || !SECRET_NAME.test(k))) env[k] = v;
  }
  // No terminal to prompt on (stdin is /dev/null): make git fail fast instead of hanging.
  return { ...env, GIT_TERMINAL_PROMPT: "0", PAGER: "cat", GIT_PAGER: "cat" };
}

/* ---------- remembered decisions ---------- */

export type RuleScope = "session" | "project" | "global";
export type RuleAction = "allow" | "deny" | "ask";

export interface PermissionRule {
  id: string;
  scope: RuleScope;
  action: RuleAction;
  /** Words matched against each simple command of a line; a final `*` matches any further arguments. */
  pattern: string;
  tool: "bash";
  /** The project's root (its git top level), for project scope. */
  project?: string;
  sessionId?: string;
  source: "user" | "config";
  createdAt: string;
  /** Saved while answering a "not sandboxed" question: it also covers commands run without the sandbox. */
  unsandboxed?: boolean;
}

export interface NewRule {
  scope: RuleScope;
  action: RuleAction;
  pattern: string;
  cwd?: string;
  sessionId?: string;
  unsandboxed?: boolean;
}

/** The rules that apply to one command (its program and arguments), strongest first: deny, ask, allow. */
export interface PermissionRules {
  /** Every rule that matches `argv` where `cwd`/`sessionId` apply, strongest first. */
  matching(argv: readonly string[], where: { cwd: string; sessionId: string }): PermissionRule[];
  /** Validates and saves a rule (400 for bad input); resolves once it is on disk. */
  add(rule: NewRule): Promise<PermissionRule>;
  /** Every rule; with `cwd`, those that can apply there (global, that project's, session rules). 400 for a bad cwd. */
  list(cwd?: string): readonly PermissionRule[];
  /** Revokes a saved rule: 404 unknown, 409 for a rule from config.json. */
  remove(id: string): Promise<void>;
}

export const PermissionRulesToken = createToken<PermissionRules>("permission-rules");

/** Config key `permissions`: rules the user wrote in config.json (listed with `source: "config"`, not deletable). */
export const PermissionsConfigSchema = T.Object(
  {
    rules: T.Optional(
      T.Array(
        T.Object(
          {
            action: T.Union([T.Literal("allow"), T.Literal("deny"), T.Literal("ask")]),
            pattern: T.String({ minLength: 1, maxLength: 1000 }),
            /** A project's directory (its git top level is used); absent: every project. */
            project: T.Optional(T.String({ minLength: 1 })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);
export type PermissionsConfig = Static<typeof PermissionsConfigSchema>;
