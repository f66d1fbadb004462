/**
 * Section 7: the agent's search tools on a large tree (a copy of this project's node_modules, ~20,000 files, in a
 * git repository), the three queries of issue 27, next to ripgrep itself run the way a user runs it in a terminal
 * (`rg PATTERN`, `rg --files -g GLOB`, output read through a pipe). The tools run in a process of their own under the
 * V8 flags `agentd serve` sets (search-child.ts): the code a turn runs, without the turn, with the daemon's garbage
 * collection; ripgrep is spawned from the same process. Each figure is the median of interleaved trials on a warm page
 * cache, after one call of each that is not counted. The JavaScript engine (no ripgrep) is measured once per query, for
 * reference.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { ToolDefinition } from "../core/index.js";
import { searchEngine } from "../core/index.js";
import { LISTING_FLAGS } from "../core/search/ripgrep.js";
import { createFsTools } from "../plugins/tools-fs/index.js";
import { makeToolContext } from "../testing/plugin-harness.js";
import { now } from "./lib/clock.js";
import { tempDir } from "./lib/daemon.js";
import { int, ms, printTable, summarize } from "./lib/stats.js";

interface Query {
  label: string;
  tool: "grep" | "glob";
  args: Record<string, unknown>;
  rg: string[];
}

const QUERIES: Query[] = [
  {
    label: "grep, a literal with few hits (createChildContainer)",
    tool: "grep",
    args: { pattern: "createChildContainer", literal: true },
    rg: ["--fixed-strings", "createChildContainer"],
  },
  {
    label: "grep, a regex hitting many files (function\\s+\\w+Sync\\()",
    tool: "grep",
    args: { pattern: "function\\s+\\w+Sync\\(" },
    rg: ["function\\s+\\w+Sync\\("],
  },
  { label: "glob **/*.d.ts", tool: "glob", args: { pattern: "**/*.d.ts" }, rg: ["--files", "-g", "*.d.ts"] },
  // `-g` above is an override: it lists a matching file even when .gitignore ignores it, which the tool must not.
  // ripgrep with the tool's own rules (core/search/list.ts): ignore files respected for every file (a type, not an
  // override), hidden files listed, .git left out.
  {
    label: "glob **/*.d.ts vs rg with the tool's rules",
    tool: "glob",
    args: { pattern: "**/*.d.ts" },
    rg: ["--files", ...LISTING_FLAGS, "--type-add", "only:*.d.ts", "--type", "only"],
  },
  // The tool lists newest first, which needs the time of every match; rg's listing above reads none. The same
  // order from ripgrep, for reference (its sort makes it walk on one thread).
  {
    label: "glob **/*.d.ts vs rg newest first (--sortr modified)",
    tool: "glob",
    args: { pattern: "**/*.d.ts" },
    rg: ["--files", "--sortr", "modified", "-g", "*.d.ts"],
  },
];

export interface SearchRow {
  label: string;
  rg: number;
  tool: number;
  js: number;
  shown: string;
}

export interface SearchResult {
  files: number;
  rgPath: string;
  rows: SearchRow[];
}

function timeRg(rg: string, cwd: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = now();
    const child = spawn(rg, args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.resume();
    child.on("error", reject);
    child.on("close", () => resolve(now() - t));
  });
}

async function timeTool(tool: ToolDefinition, cwd: string, args: Record<string, unknown>) {
  const t = now();
  const r = await tool.execute(args, makeToolContext({ sessionId: "bench", cwd }));
  if (r.isError) throw new Error(`${tool.name} failed: ${r.content}`);
  return { ms: now() - t, meta: r.meta as Record<string, unknown> };
}

/** The section, measured in a child process under the daemon's V8 flags (search-child.ts). */
export async function searchBench(sourceTree: string, reps: number): Promise<SearchResult> {
  const child = fileURLToPath(new URL("./search-child.js", import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [child, sourceTree, String(reps)], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as SearchResult;
}

/** The section in this process (search-child.ts runs it once it has set the daemon's flags). */
export async function measureSearch(sourceTree: string, reps: number): Promise<SearchResult> {
  const info = searchEngine();
  if (info.engine !== "ripgrep" || !info.path) throw new Error(`ripgrep is needed for this section (${info.reason})`);
  const rg = info.path;
  const tree = join(tempDir("agentd-bench-search-"), "tree");
  execFileSync("cp", ["-r", sourceTree, tree]);
  execFileSync("git", ["init", "-q"], { cwd: tree });
  const files = Number(execFileSync("sh", ["-c", "find . -type f | wc -l"], { cwd: tree, encoding: "utf8" }).trim());
  const withRg = createFsTools();
  const withJs = createFsTools({}, "javascript");
  await timeRg(rg, tree, ["--files"]); // warms the page cache
  const rows: SearchRow[] = [];
  for (const q of QUERIES) {
    const rgTimes: number[] = [];
    const toolTimes: number[] = [];
    let meta: Record<string, unknown> = {};
    // One call of each first, not counted: the tool's code compiled and optimised, as in a daemon that has run it.
    await timeRg(rg, tree, q.rg);
    await timeTool(withRg[q.tool], tree, q.args);
    for (let i = 0; i < reps; i++) {
      rgTimes.push(await timeRg(rg, tree, q.rg));
      const r = await timeTool(withRg[q.tool], tree, q.args);
      toolTimes.push(r.ms);
      meta = r.meta;
    }
    if (meta.engine !== "ripgrep") throw new Error(`${q.label}: ran on ${String(meta.engine)}`);
    const js = await timeTool(withJs[q.tool], tree, q.args);
    const shown = q.tool === "grep" ? `${int(Number(meta.matches))} matches` : `${int(Number(meta.count))} files`;
    rows.push({
      label: q.label,
      rg: summarize(rgTimes).p50,
      tool: summarize(toolTimes).p50,
      js: js.ms,
      shown,
    });
  }
  return { files, rgPath: rg, rows };
}

export function printSearch(r: SearchResult, reps: number): void {
  printTable(
    `7. search tools on ${int(r.files)} files (node_modules copy in a git repository), p50 of ${reps}; ms`,
    ["query", "rg itself", "agentd tool", "ratio", "JS fallback", "tool result"],
    r.rows.map((x) => [x.label, ms(x.rg), ms(x.tool), `${(x.tool / x.rg).toFixed(2)}x`, ms(x.js), x.shown]),
    [
      `ripgrep: ${r.rgPath}. The tool stops at its caps (grep: 100 matching lines), rg prints every match.`,
      "Goal: the tool at most 1.5x ripgrep's time on the same tree (the first three rows; the fourth is the third",
      "against ripgrep given the tool's rules, which `-g` does not keep: it lists a matching file that .gitignore ignores).",
    ],
  );
}
