import type {
  Logger,
  Persona,
  ProjectContext,
  ProjectTrustPrompt,
  ProjectView,
  RegistryView,
  Skill,
} from "../../core/index.js";
import type { HookSpec } from "./hooks.js";
import { hasAny, type Resources, scanGlobal, scanProject } from "./scan.js";
import type { TrustStore } from "./trust.js";
import { trustPrompt } from "./trust-prompt.js";

/** Per-file and total bounds of the instructions appended to the system prompt (characters). */
export const MAX_INSTRUCTION_FILE_CHARS = 32_000;
export const MAX_INSTRUCTIONS_CHARS = 96_000;
/** Project scans kept in memory (most recently used). */
const MAX_CACHED_PROJECTS = 200;

export interface ProjectContextDeps {
  home: string;
  trust: TrustStore;
  registry: RegistryView<Persona>;
  defaultPersona: () => string;
  /** Hook values from config (the `hooks` config key, plugin options). */
  globalHooks: () => unknown[];
  log: Logger;
  /** Called by `reload()` (e.g. to forget cached project roots). */
  onReload?: () => void;
  /** Called after `reload()` has dropped every cache (e.g. to announce trust prompts that appeared or cleared). */
  afterReload?: () => void;
}

/** The SDK's `ProjectView` with everything the scan found. */
export interface ProjectScanView extends ProjectView {
  root: string;
  trusted: boolean;
  /** What the project has, whatever the trust (for the trust prompt). */
  local: Resources;
  global: Resources;
}

function bounded(text: string, file: string, budget: number): string {
  const max = Math.min(MAX_INSTRUCTION_FILE_CHARS, budget);
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max))}\n[truncated: ${text.length - max} more characters in ${file}]`;
}

/**
 * Global and project resources, scanned once per scope and cached until `reload()` or a trust change. Untrusted
 * projects get the global resources only.
 */
export class ProjectResources implements ProjectContext {
  private global: Resources | undefined;
  private readonly projects = new Map<string, Resources>();
  private readonly instructionCache = new Map<string, string>();

  constructor(private readonly deps: ProjectContextDeps) {}

  reload(): void {
    this.deps.onReload?.();
    this.global = undefined;
    this.projects.clear();
    this.instructionCache.clear();
    this.deps.afterReload?.();
  }

  /** Whether the project's resources are in memory (scanned since the last reload). */
  scanned(root: string): boolean {
    return this.projects.has(root);
  }

  /** Drops one project's cache (its trust changed). */
  invalidate(root: string): void {
    this.projects.delete(root);
    this.instructionCache.delete(root);
  }

  globalResources(): Resources {
    if (!this.global) {
      this.global = scanGlobal(this.deps.home, this.deps.globalHooks());
      for (const p of this.global.problems) this.deps.log.warn({ problem: p }, "global resource skipped");
    }
    return this.global;
  }

  /** The trust prompt of the project containing `cwd`, while it waits for a decision (see `trustPrompt`). */
  trustPrompt(cwd: string): ProjectTrustPrompt | undefined {
    return trustPrompt(this.deps.trust, this, cwd);
  }

  projectResources(root: string): Resources {
    let r = this.projects.get(root);
    if (r) {
      // Refresh the LRU position.
      this.projects.delete(root);
    } else {
      r = scanProject(root);
      if (this.projects.size >= MAX_CACHED_PROJECTS) {
        const oldest = this.projects.keys().next().value as string;
        this.invalidate(oldest);
      }
    }
    this.projects.set(root, r);
    return r;
  }

  view(cwd: string): ProjectScanView {
    const root = this.deps.trust.projectRoot(cwd);
    return {
      root,
      trusted: this.deps.trust.isTrusted(root),
      local: this.projectResources(root),
      global: this.globalResources(),
    };
  }

  hasLocalResources(cwd: string): boolean {
    return hasAny(this.view(cwd).local);
  }

  /** Scopes in precedence order: the trusted project first, then global. */
  private scopes(cwd: string | undefined): Resources[] {
    if (cwd === undefined) return [this.globalResources()];
    const v = this.view(cwd);
    return v.trusted ? [v.local, v.global] : [v.global];
  }

  personas(cwd?: string): Persona[] {
    const byName = new Map<string, Persona>();
    for (const scope of this.scopes(cwd))
      for (const p of scope.personas) if (!byName.has(p.name)) byName.set(p.name, p);
    // A project plugin's personas are visible only from its project.
    const root = cwd === undefined ? undefined : this.deps.trust.projectRoot(cwd);
    for (const p of this.deps.registry.list())
      if (!byName.has(p.name) && (!p.projectRoot || p.projectRoot === root)) byName.set(p.name, p);
    const def = this.deps.defaultPersona();
    return [...byName.values()].sort((a, b) =>
      a.name === def ? -1 : b.name === def ? 1 : a.label.localeCompare(b.label) || a.name.localeCompare(b.name),
    );
  }

  persona(name: string, cwd: string): Persona | undefined {
    const all = this.personas(cwd);
    return all.find((p) => p.name === name) ?? all.find((p) => p.name === this.deps.defaultPersona());
  }

  skills(cwd?: string): Skill[] {
    const byName = new Map<string, Skill>();
    for (const scope of this.scopes(cwd)) for (const s of scope.skills) if (!byName.has(s.name)) byName.set(s.name, s);
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  skill(name: string, cwd?: string): Skill | undefined {
    return this.skills(cwd).find((s) => s.name === name);
  }

  hooks(cwd: string): HookSpec[] {
    return this.scopes(cwd)
      .reverse()
      .flatMap((s) => s.hooks);
  }

  instructions(cwd: string): string {
    const root = this.deps.trust.projectRoot(cwd);
    const cached = this.instructionCache.get(root);
    if (cached !== undefined) return cached;
    const text = this.buildInstructions(cwd);
    this.instructionCache.set(root, text);
    return text;
  }

  private buildInstructions(cwd: string): string {
    const v = this.view(cwd);
    const global = v.global;
    const local = v.trusted ? v.local : undefined;
    let budget = MAX_INSTRUCTIONS_CHARS;
    const parts: string[] = [];
    const add = (heading: string, body: string, file: string) => {
      if (budget <= 0) return;
      const text = `${heading}\n${bounded(body, file, budget)}`;
      budget -= text.length;
      parts.push(text);
    };
    const rules = [...global.rules, ...(local?.rules ?? [])];
    if (rules.length) {
      parts.push("## Rules\nFollow these rules in this session.");
      for (const r of rules) add(`### ${r.name}${r.description ? ` (${r.description})` : ""}`, r.content, r.file);
    }
    for (const c of global.contextFiles) add(`## Global instructions (${c.name})`, c.content, c.file);
    for (const c of local?.contextFiles ?? [])
      add(`## Project instructions (${c.name} in ${v.root})`, c.content, c.file);
    const skills = this.skills(cwd).filter((s) => s.modelInvocable);
    if (skills.length && budget > 0) {
      const list = skills.map((s) => `- ${s.name}: ${s.description || "(no description)"}`).join("\n");
      add(
        "## Skills",
        `When a task matches a skill, load it with the skill tool (name) before starting:\n${list}`,
        "skills",
      );
    }
    return parts.join("\n\n");
  }
}
