import type { Persona } from "./contributions.js";
import type { Disposable } from "./disposable.js";
import { createToken } from "./tokens.js";

export interface TrustRecord {
  /** Absolute project root. */
  path: string;
  trusted: boolean;
  decidedAt: string;
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
  set(cwd: string, trusted: boolean): TrustRecord;
  /** Called with the project root whenever a decision changes. */
  onChange(fn: (root: string) => void): Disposable;
}
export const ProjectTrustToken = createToken<ProjectTrust>("project-trust");

/** What a session's project adds to the agent: system-prompt parts and project personas (trusted projects only). */
export interface ProjectContext {
  /** Context files (AGENTS.md, CLAUDE.md) and rules, ready to append to the system prompt; "" when none/untrusted. */
  instructions(cwd: string): string;
  /** A persona by name, project personas first (trusted only), then the registry. */
  persona(name: string, cwd: string): Persona | undefined;
  /** Every persona visible from `cwd`. */
  personas(cwd?: string): Persona[];
}
export const ProjectContextToken = createToken<ProjectContext>("project-context");
