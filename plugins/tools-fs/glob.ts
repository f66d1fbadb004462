import { lstat, stat } from "node:fs/promises";
import path from "node:path";
import { defineTool, T, type ToolDefinition, ToolFailure, toolError } from "../../core/index.js";
import type { FsLimits } from "./limits.js";
import { displayPath, resolvePath, visibleFiles } from "./paths.js";
import { fsFailure } from "./result.js";
import { compileGlob, listFiles } from "./walk.js";

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

const STAT_BATCH = 64;

export function createGlobTool(limits: FsLimits): ToolDefinition {
  return defineTool({
    name: "glob",
    readOnly: true,
    description:
      'Find files by glob pattern (e.g. "src/**/*.ts", "*.{json,yaml}"), newest first. A pattern without "/" ' +
      "matches file names at any depth. Files ignored by .gitignore and the .git directory are skipped. " +
      "Returns file paths relative to the working directory; directories are not listed (use ls).",
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

      const listing = await listFiles(base, ctx.signal, limits.walkMaxFiles);
      const matches = compileGlob(pattern);
      const hits = visibleFiles(ctx, base, listing.files).filter((rel) => matches(rel));
      const dated: Array<{ rel: string; mtime: number }> = [];
      // lstat: a link's own time, never the time of something outside the workspace it points to.
      for (let i = 0; i < hits.length; i += STAT_BATCH) {
        ctx.signal.throwIfAborted();
        const batch = hits.slice(i, i + STAT_BATCH);
        const stats = await Promise.all(batch.map((rel) => lstat(path.join(base, rel)).catch(() => undefined)));
        stats.forEach((st, j) => {
          const rel = batch[j];
          if (st && rel !== undefined && !st.isDirectory()) dated.push({ rel, mtime: st.mtimeMs });
        });
      }
      dated.sort((a, b) => b.mtime - a.mtime || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));

      if (dated.length === 0) {
        const note = listing.truncated ? ` (only the first ${listing.files.length} files were examined)` : "";
        return { content: `No files match "${pattern}" in ${display}${note}.`, meta: { count: 0 } };
      }
      const shown = dated.slice(0, limit).map((d) => displayPath(root, path.join(base, d.rel)));
      const notes: string[] = [];
      if (dated.length > limit) {
        notes.push(
          `[Showing the ${limit} newest of ${dated.length} matches. Narrow the pattern or path to see others.]`,
        );
      }
      if (listing.truncated) {
        notes.push(`[The search stopped after ${listing.files.length} files; narrow path to search the rest.]`);
      }
      return {
        content: shown.join("\n") + (notes.length ? `\n\n${notes.join("\n")}` : ""),
        meta: { count: dated.length, shown: shown.length, source: listing.source },
      };
    },
  });
}
