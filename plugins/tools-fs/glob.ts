import { stat } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import {
  comparePaths,
  confirmInside,
  defineTool,
  fileTimes,
  type SearchEngineName,
  type SearchState,
  T,
  type ToolDefinition,
  ToolFailure,
  toolError,
  visitFiles,
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
 * ("*.ts" finds src/a/b.ts), like .gitignore and ripgrep; a pattern with "/" is anchored at the root. The same test
 * as picomatch's matcher (a path equal to the pattern matches as is, an empty one never), made through the regular
 * expression's `test`: the matcher builds two result objects and a match array per path, and a listing tests tens
 * of thousands.
 */
export function compileGlob(pattern: string): (rel: string) => boolean {
  const clean = pattern.replace(/^\.\//, "");
  const base = !clean.includes("/");
  const re = picomatch.makeRe(clean, { dot: true, basename: base });
  if (base) return (rel) => rel === clean || (rel !== "" && re.test(lastSegment(rel)));
  return (rel) => rel === clean || (rel !== "" && re.test(rel));
}

/** The last non-empty "/"-separated segment, as picomatch takes a path's base name. */
function lastSegment(rel: string): string {
  const end = rel.endsWith("/") ? rel.length - 1 : rel.length;
  return rel.slice(rel.lastIndexOf("/", end - 1) + 1, end);
}

/**
 * A ripgrep glob matching at least what compileGlob(pattern) matches: the pattern's last segment, which ripgrep
 * matches against the file name at any depth. None when that segment could span directories or uses syntax
 * ripgrep's globs may read differently (extglobs, escapes).
 */
export function ripgrepHint(pattern: string): string | undefined {
  const last = pattern.slice(pattern.lastIndexOf("/") + 1);
  if (last === "" || last.includes("**") || last.includes("\\") || /[@!+?*]\(/.test(last)) return undefined;
  return last;
}

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
      const opts = {
        signal: ctx.signal,
        hidden: ctx.isHidden,
        maxFiles: limits.walkMaxFiles,
        engine,
        only: matches,
        ripgrepGlob: ripgrepHint(pattern),
      };
      // lstat: a file swapped for a link meanwhile is dropped, never dated by its target. Done while ripgrep still
      // lists. A name that is not UTF-8 is found through confirmInside (by its bytes).
      const visited = await visitFiles(base, opts, state, (batch) => fileTimes(base, batch));
      const listed = visited.rels.length;
      // The matches and their times in two arrays (the times unboxed), ordered through their indices: a listing's
      // thousands of pairs would each be an object, collected and copied by the young generation meanwhile.
      const rels: string[] = [];
      const times: number[] = [];
      const unnamed: string[] = [];
      for (let i = 0; i < listed; i++) {
        const mtime = visited.found[i];
        if (mtime === undefined) unnamed.push(visited.rels[i] as string);
        else if (mtime !== null) {
          rels.push(visited.rels[i] as string);
          times.push(mtime);
        }
      }
      for (const [rel, st] of unnamed.length > 0 ? await confirmInside(base, unnamed, { stats: true }) : []) {
        if (st.isFile()) {
          rels.push(rel);
          times.push(st.mtimeMs);
        }
      }
      const newest: number[] = [];
      for (let i = 0; i < rels.length; i++) newest.push(i);
      newest.sort((i, j) => {
        const a = times[i] as number;
        const b = times[j] as number;
        return a > b ? -1 : a < b ? 1 : comparePaths(rels[i] as string, rels[j] as string);
      });

      if (rels.length === 0) {
        const note = state.truncated ? ` (only the first ${listed} files were examined)` : "";
        return {
          content: `No files match "${pattern}" in ${display}${note}.`,
          meta: { count: 0, engine: state.engine },
        };
      }
      // Only names confirmed inside the base are shown: a directory swapped for a link to elsewhere while it was
      // listed (ripgrep reads by path) is dropped here.
      const shown: string[] = [];
      const prefix = displayPath(root, base);
      const show = (rel: string) =>
        prefix === "." ? rel : prefix.endsWith("/") ? `${prefix}${rel}` : `${prefix}/${rel}`;
      for (let i = 0; shown.length < limit && i < newest.length; i += limit) {
        const next = newest.slice(i, i + limit).map((k) => rels[k] as string);
        for (const [rel] of await confirmInside(base, next)) {
          if (shown.length < limit) shown.push(show(rel));
        }
      }
      const notes: string[] = [];
      if (rels.length > limit) {
        notes.push(
          `[Showing the ${limit} newest of ${rels.length} matches. Narrow the pattern or path to see others.]`,
        );
      }
      if (state.truncated) {
        notes.push(`[The search stopped after ${listed} files; narrow path to search the rest.]`);
      }
      return {
        content: shown.join("\n") + (notes.length ? `\n\n${notes.join("\n")}` : ""),
        meta: { count: rels.length, shown: shown.length, engine: state.engine },
      };
    },
  });
}
