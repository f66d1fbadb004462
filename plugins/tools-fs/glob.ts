import { stat } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import {
  comparePaths,
  confirmInside,
  defineTool,
  listFiles,
  type SearchEngineName,
  type SearchState,
  T,
  type ToolDefinition,
  ToolFailure,
  toolError,
} from "../../core/index.js";
import type { FsLimits } from "./limits.js";
import { displayPath, resolvePath } from "./paths.js";
import { fsFailure } from "./result.js";

/** Rejects patterns that would escape the base directory; those belong in `path`. */
export function checkPattern(pattern: string, key: string): void {
  if (path.isAbsolute(pattern) || pattern.split("/").includes("..")) {
    throw new ToolFailure(
      "invalid_arguments",
      `"${key}" must be relative to the search directory without ".." (got "${pattern}"); put the directory in "path".`,
      "Fix the arguments and call the tool again.",
    );
  }
}

/**
 * A glob filter over root-relative paths (picomatch). A pattern without "/" matches the file name at any depth
 * ("*.ts" finds src/a/b.ts), like .gitignore and ripgrep; a pattern with "/" is anchored at the root.
 */
export function compileGlob(pattern: string): (rel: string) => boolean {
  const clean = pattern.replace(/^\.\//, "");
  return picomatch(clean, { dot: true, basename: !clean.includes("/") });
}

const STAT_BATCH = 64;

export function createGlobTool(limits: FsLimits, engine?: SearchEngineName): ToolDefinition {
  return defineTool({
    name: "glob",
    readOnly: true,
    description:
      'Find files by glob pattern (e.g. "src/**/*.ts", "*.{json,yaml}"), newest first. A pattern without "/" ' +
      "matches file names at any depth. Files ignored by .gitignore, .ignore or the global git excludes and the " +
      ".git directory are skipped; hidden files are included. Returns file paths relative to the working " +
      "directory; directories and symbolic links are not listed (use ls).",
    parameters: T.Object(
      {
        pattern: T.String({ minLength: 1, description: "Glob pattern, relative to path." }),
        path: T.Optional(T.String({ description: "Directory to search in. Default: the working directory." })),
        limit: T.Optional(
          T.Integer({
            minimum: 1,
            description: `Max results (default ${limits.globDefaultLimit}, at most ${limits.globMaxLimit}).`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    async execute(args, ctx) {
      const pattern = args.pattern.trim();
      checkPattern(pattern, "pattern");
      const input = args.path ?? ".";
      const limit = Math.min(args.limit ?? limits.globDefaultLimit, limits.globMaxLimit);
      const resolved = await resolvePath(ctx, input, "read");
      if (!resolved.ok) return resolved.result;
      const { abs: base, display, root } = resolved.path;
      try {
        if (!(await stat(base)).isDirectory()) {
          return toolError(
            "invalid_arguments",
            `${display} is a file, not a directory.`,
            "Pass a directory as path, or read the file.",
          );
        }
      } catch (err) {
        return fsFailure(err, display);
      }

      const matches = compileGlob(pattern);
      const state: SearchState = { engine: "javascript", truncated: false };
      const dated: Array<{ rel: string; mtime: number }> = [];
      let batch: string[] = [];
      let listed = 0;
      // Confirmed inside the base (a directory swapped for a link while it was listed is dropped), lstat'ed: a
      // file swapped for a link meanwhile is dropped too, never dated by its target.
      const stamp = async () => {
        for (const [rel, st] of await confirmInside(base, batch)) {
          if (st.isFile()) dated.push({ rel, mtime: st.mtimeMs });
        }
        batch = [];
      };
      const opts = { signal: ctx.signal, maxFiles: limits.walkMaxFiles, engine };
      for await (const rel of listFiles(base, opts, state)) {
        listed++;
        if (!matches(rel)) continue;
        batch.push(rel);
        if (batch.length >= STAT_BATCH) await stamp();
      }
      await stamp();
      dated.sort((a, b) => b.mtime - a.mtime || comparePaths(a.rel, b.rel));

      if (dated.length === 0) {
        const note = state.truncated ? ` (only the first ${listed} files were examined)` : "";
        return {
          content: `No files match "${pattern}" in ${display}${note}.`,
          meta: { count: 0, engine: state.engine },
        };
      }
      const shown = dated.slice(0, limit).map((d) => displayPath(root, path.join(base, d.rel)));
      const notes: string[] = [];
      if (dated.length > limit) {
        notes.push(
          `[Showing the ${limit} newest of ${dated.length} matches. Narrow the pattern or path to see others.]`,
        );
      }
      if (state.truncated) {
        notes.push(`[The search stopped after ${listed} files; narrow path to search the rest.]`);
      }
      return {
        content: shown.join("\n") + (notes.length ? `\n\n${notes.join("\n")}` : ""),
        meta: { count: dated.length, shown: shown.length, engine: state.engine },
      };
    },
  });
}
