import type { Persona } from "./contributions.js";
import type { Disposable } from "./disposable.js";
import type { ProjectTrustPrompt } from "./session-types.js";
import { createToken } from "./tokens.js";

export interface TrustRecord {
  /** Absolute project root. */
  path: string;
  trusted: boolean;
  decidedAt: string;
  /** Trusted only: the content hash of each project plugin (`.agentd/plugins/<name>`) when trust was given. */
  plugins?: Record<string, string>;
}

/**
 * The trust decision per project. Project-local resources (`<project>/.agentd/...`, AGENTS.md) are used only for
 * trusted projects; global resources always.
 */
export interface ProjectTrust {
  /** The project root of a working directory: the git top level when inside a repository, else the directory. */
  projectRoot(cwd: string): string;
  isTrusted(cwd: string): boolean;
  list(): TrustRecord[];
  /** Trusting (again) pins the current content hash of every project plugin; a plugin loads only while it matches. */
  set(cwd: string, trusted: boolean): Promise<TrustRecord>;
  /** The pinned plugin hashes of the project containing `cwd` (undefined when not trusted). */
  pins(cwd: string): Record<string, string> | undefined;
  /** Called with the project root whenever a decision changes; a returned promise is awaited by POST /projects/trust. */
  onChange(fn: (root: string) => void | Promise<void>): Disposable;
}
export const ProjectTrustToken = createToken<ProjectTrust>("project-trust");

/** A skill: instructions the model loads on demand (`<dir>/SKILL.md` with YAML frontmatter). */
export interface Skill {
  name: string;
  description: string;
  /** The SKILL.md body, frontmatter stripped. */
  content: string;
  /** The skill's directory (bundled files live next to SKILL.md). */
  dir: string;
  source: "global" | "project";
  /** false when the frontmatter says `disable-model-invocation: true` (user-invoked only). */
  modelInvocable: boolean;
}

/** What a session's project adds to the agent: system-prompt parts and project personas (trusted projects only). */
export interface ProjectContext {
  /** Global and (trusted) project rules and context files, ready to append to the system prompt; "" when none. */
  instructions(cwd: string): string;
  /**
   * A persona by name: project personas first (trusted only), then global ones, then the registry. Falls back to
   * the default persona when `name` is not visible from `cwd` (e.g. a project persona after trust was revoked).
   */
  persona(name: string, cwd: string): Persona | undefined;
  /** Every persona visible from `cwd` (without `cwd`: global and registered ones). */
  personas(cwd?: string): Persona[];
  /** Every skill visible from `cwd`, project skills shadowing global ones of the same name. */
  skills(cwd?: string): Skill[];
  skill(name: string, cwd?: string): Skill | undefined;
  /** What the project of `cwd` and the daemon home have, whatever the trust (listings and the trust prompt). */
  view(cwd: string): ProjectView;
  /** Re-scans global and project resources (the `/reload` command). */
  reload(): void;
  /**
   * The trust prompt of the project containing `cwd` while it waits for a decision (undecided with local resources,
   * or trusted with a project plugin new or changed since); undefined otherwise.
   */
  trustPrompt(cwd: string): ProjectTrustPrompt | undefined;
}

/** Rules, tool hooks and SSH hosts of one scope (a project's `.agentd/` or the daemon home). */
export interface ProjectResourceList {
  rules: ReadonlyArray<{ name: string; description: string }>;
  hooks: ReadonlyArray<{ event: string; matcher: string; command: readonly string[] }>;
  /** Project only: hosts in `.agentd/ssh.json`. */
  ssh: readonly string[];
}

/** A directory's project as `ProjectContext.view` shows it: the project's own resources count only when trusted. */
export interface ProjectView {
  root: string;
  trusted: boolean;
  local: ProjectResourceList;
  global: ProjectResourceList;
}
export const ProjectContextToken = createToken<ProjectContext>("project-context");
