import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { Persona, Skill } from "../../core/index.js";
import { type HookSpec, parseHooks } from "./hooks.js";
import { firstLine, metaString, parseMarkdown } from "./markdown.js";
import { isConfined } from "./paths.js";

export interface Rule {
  name: string;
  description: string;
  content: string;
  file: string;
}

export interface ContextFile {
  /** As shown in headings: "AGENTS.md". */
  name: string;
  file: string;
  content: string;
}

/** Everything one scope (the daemon home, or one project) contributes. */
export interface Resources {
  personas: Persona[];
  skills: Skill[];
  rules: Rule[];
  contextFiles: ContextFile[];
  hooks: HookSpec[];
  /** Project only: names of the servers in `.agentd/mcp.json` (the MCP plugin connects them). */
  mcp: string[];
  /** Project only: hosts in `.agentd/ssh.json`. */
  ssh: string[];
  /** Files that were skipped, and why (readable; shown by GET /projects/trust). */
  problems: string[];
}

const MAX_FILE_BYTES = 256 * 1024;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const CONTEXT_FILE_NAMES = ["AGENTS.md", "CLAUDE.md"];

export function emptyResources(): Resources {
  return { personas: [], skills: [], rules: [], contextFiles: [], hooks: [], mcp: [], ssh: [], problems: [] };
}

interface Scope {
  /** Where `personas/`, `skills/`, `rules/` live: `<home>` or `<project>/.agentd`. */
  dir: string;
  source: "global" | "project";
  /** Project files must resolve inside the project (symlinks cannot escape); global ones are the user's own. */
  confineTo?: string;
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** A readable, bounded, confined text file, or undefined (with the reason in `problems`). */
function readText(file: string, scope: Scope, problems: string[], quietIfMissing = true): string | undefined {
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) return undefined;
    size = st.size;
  } catch {
    if (!quietIfMissing) problems.push(`${file}: not found`);
    return undefined;
  }
  if (scope.confineTo && !isConfined(file, scope.confineTo)) {
    problems.push(`${file}: points outside the project (ignored)`);
    return undefined;
  }
  if (size > MAX_FILE_BYTES) {
    problems.push(`${file}: larger than ${MAX_FILE_BYTES} bytes (ignored)`);
    return undefined;
  }
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    problems.push(`${file}: ${(err as Error).message}`);
    return undefined;
  }
}

function validName(name: string, file: string, problems: string[]): boolean {
  if (NAME_RE.test(name)) return true;
  problems.push(`${file}: invalid name "${name}" (letters, digits, ".", "_", "-"; up to 64)`);
  return false;
}

/** The parsed `*.md` files of `<scope>/<sub>/` (problems of unreadable or malformed files are recorded). */
function* markdownFiles(scope: Scope, sub: string, problems: string[]) {
  const dir = join(scope.dir, sub);
  for (const entry of listDir(dir)) {
    if (!entry.endsWith(".md")) continue;
    const file = join(dir, entry);
    const text = readText(file, scope, problems);
    if (text === undefined) continue;
    const doc = parseMarkdown(text);
    if (doc.problem) problems.push(`${file}: ${doc.problem}`);
    yield { file, doc, stem: basename(entry, ".md") };
  }
}

function scanPersonas(scope: Scope, problems: string[]): Persona[] {
  const out: Persona[] = [];
  for (const { file, doc, stem } of markdownFiles(scope, "personas", problems)) {
    const name = metaString(doc.meta, "name") ?? stem;
    if (!validName(name, file, problems)) continue;
    const prompt = doc.body.trim();
    if (!prompt) {
      problems.push(`${file}: empty prompt (ignored)`);
      continue;
    }
    out.push({
      name,
      label: metaString(doc.meta, "label") ?? name.charAt(0).toUpperCase() + name.slice(1),
      description: metaString(doc.meta, "description") ?? firstLine(prompt),
      prompt,
      source: scope.source,
    });
  }
  return out;
}

function scanSkills(scope: Scope, problems: string[]): Skill[] {
  const dir = join(scope.dir, "skills");
  const out: Skill[] = [];
  for (const entry of listDir(dir)) {
    const skillDir = join(dir, entry);
    const file = join(skillDir, "SKILL.md");
    const text = readText(file, scope, problems);
    if (text === undefined) continue;
    const doc = parseMarkdown(text);
    if (doc.problem) problems.push(`${file}: ${doc.problem}`);
    const name = metaString(doc.meta, "name") ?? entry;
    if (!validName(name, file, problems)) continue;
    let real = skillDir;
    try {
      real = realpathSync(skillDir);
    } catch {}
    out.push({
      name,
      description: metaString(doc.meta, "description") ?? firstLine(doc.body),
      content: doc.body.trim(),
      dir: real,
      source: scope.source,
      modelInvocable: doc.meta["disable-model-invocation"] !== true,
    });
  }
  return out;
}

function scanRules(scope: Scope, problems: string[]): Rule[] {
  const out: Rule[] = [];
  for (const { file, doc, stem } of markdownFiles(scope, "rules", problems)) {
    const content = doc.body.trim();
    if (!content) continue;
    out.push({
      name: metaString(doc.meta, "name") ?? stem,
      description: metaString(doc.meta, "description") ?? "",
      content,
      file,
    });
  }
  return out;
}

/** AGENTS.md and CLAUDE.md in `dir`; the same file twice (CLAUDE.md symlinked to AGENTS.md) counts once. */
function scanContextFiles(dir: string, scope: Scope, problems: string[]): ContextFile[] {
  const out: ContextFile[] = [];
  const seen = new Set<string>();
  for (const name of CONTEXT_FILE_NAMES) {
    const file = join(dir, name);
    const content = readText(file, scope, problems);
    if (content === undefined || !content.trim()) continue;
    let real = file;
    try {
      real = realpathSync(file);
    } catch {}
    if (seen.has(real) || out.some((c) => c.content.trim() === content.trim())) continue;
    seen.add(real);
    out.push({ name, file, content: content.trim() });
  }
  return out;
}

function readJson(file: string, scope: Scope, problems: string[]): unknown {
  const text = readText(file, scope, problems);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    problems.push(`${file}: invalid JSON (${(err as Error).message})`);
    return null;
  }
}

function namesOf(value: unknown): string[] {
  if (Array.isArray(value)) {
    return value.map((v, i) => (typeof v?.name === "string" ? v.name : typeof v === "string" ? v : `#${i + 1}`));
  }
  if (value && typeof value === "object") return Object.keys(value);
  return [];
}

/** The global resources in the daemon home. `globalHooks` are the hook values from config (already parsed). */
export function scanGlobal(home: string, hookValues: unknown[]): Resources {
  const scope: Scope = { dir: home, source: "global" };
  const r = emptyResources();
  r.personas = scanPersonas(scope, r.problems);
  r.skills = scanSkills(scope, r.problems);
  r.rules = scanRules(scope, r.problems);
  r.contextFiles = scanContextFiles(home, scope, r.problems);
  const fromFile = readJson(join(home, "hooks.json"), scope, r.problems);
  for (const value of [fromFile, ...hookValues]) r.hooks.push(...parseHooks(value, home, "global", r.problems));
  return r;
}

/** The resources of a project root (read whatever the trust; using them is gated by the caller). */
export function scanProject(root: string): Resources {
  const scope: Scope = { dir: join(root, ".agentd"), source: "project", confineTo: root };
  const r = emptyResources();
  r.personas = scanPersonas(scope, r.problems);
  r.skills = scanSkills(scope, r.problems);
  r.rules = scanRules(scope, r.problems);
  r.contextFiles = scanContextFiles(root, scope, r.problems);
  const hooks = readJson(join(scope.dir, "hooks.json"), scope, r.problems);
  if (hooks !== undefined) r.hooks = parseHooks(hooks, root, "project", r.problems);
  const mcp = readJson(join(scope.dir, "mcp.json"), scope, r.problems) as { mcpServers?: unknown } | null | undefined;
  if (mcp !== undefined) r.mcp = mcp === null ? ["mcp.json (invalid)"] : namesOf(mcp.mcpServers);
  const ssh = readJson(join(scope.dir, "ssh.json"), scope, r.problems) as { hosts?: unknown } | null | undefined;
  if (ssh !== undefined) r.ssh = ssh === null ? ["ssh.json (invalid)"] : namesOf(ssh.hosts ?? ssh);
  return r;
}

export function hasAny(r: Resources): boolean {
  return (
    r.personas.length +
      r.skills.length +
      r.rules.length +
      r.contextFiles.length +
      r.hooks.length +
      r.mcp.length +
      r.ssh.length >
    0
  );
}
