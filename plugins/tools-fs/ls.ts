import type { Dirent } from "node:fs";
import { lstat, readdir, readlink, stat } from "node:fs/promises";
import path from "node:path";
import { defineTool, T, type ToolDefinition, toolError, withDirInside } from "../../core/index.js";
import { formatBytes, plural } from "./content.js";
import type { FsLimits } from "./limits.js";
import { resolvePath } from "./paths.js";
import { fsFailure } from "./result.js";

/** Hidden because its content is git's business and huge; the model uses git commands for it. */
const HIDDEN = new Set([".git"]);

function byName(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function createLsTool(limits: FsLimits): ToolDefinition {
  return defineTool({
    name: "ls",
    readOnly: true,
    description:
      'List a directory: directories first (marked with a trailing "/"), then files with their sizes; symbolic ' +
      'links are shown as "name -> target". The .git directory is hidden. Not recursive: use glob to find files.',
    parameters: T.Object(
      {
        path: T.Optional(T.String({ description: "Directory to list. Default: the working directory." })),
        limit: T.Optional(
          T.Integer({
            minimum: 1,
            description: `Max entries (default ${limits.lsDefaultLimit}, at most ${limits.lsMaxLimit}).`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    async execute(args, ctx) {
      const input = args.path ?? ".";
      const limit = Math.min(args.limit ?? limits.lsDefaultLimit, limits.lsMaxLimit);
      const resolved = await resolvePath(ctx, input, "read");
      if (!resolved.ok) return resolved.result;
      const { abs, display, roots } = resolved.path;

      let entries: Dirent[];
      try {
        if (!(await stat(abs)).isDirectory()) {
          return toolError(
            "invalid_arguments",
            `${display} is a file, not a directory.`,
            `Use read with path "${display}".`,
          );
        }
        // Listed through the opened, verified directory: a swap for a link meanwhile is caught (core/confined-fs).
        entries = await withDirInside(roots, abs, (d) => readdir(d.path, { withFileTypes: true }));
      } catch (err) {
        return fsFailure(err, display);
      }
      const visible = entries.filter((e) => !HIDDEN.has(e.name) && !ctx.isHidden?.(path.join(abs, e.name)));
      const dirs = visible.filter((e) => e.isDirectory()).sort(byName);
      const others = visible.filter((e) => !e.isDirectory()).sort(byName);
      const ordered = [...dirs, ...others];
      const shown = ordered.slice(0, limit);

      const lines = await Promise.all(
        shown.map(async (e) => {
          if (e.isDirectory()) return `${e.name}/`;
          const full = path.join(abs, e.name);
          if (e.isSymbolicLink()) {
            const target = await readlink(full).catch(() => "?");
            return `${e.name} -> ${target}`;
          }
          if (!e.isFile()) return `${e.name} (special file)`;
          const st = await lstat(full).catch(() => undefined);
          return st ? `${e.name}  (${formatBytes(st.size)})` : e.name;
        }),
      );

      const header = `${display === "." ? "./" : `${display}/`} (${plural(dirs.length, "directory", "directories")}, ${plural(others.length, "file")})`;
      if (ordered.length === 0) return { content: `${header}\n(empty directory)`, meta: { path: abs, count: 0 } };
      const more =
        ordered.length > limit
          ? `\n\n[Showing ${limit} of ${ordered.length} entries. Raise limit or use glob to find specific files.]`
          : "";
      return { content: `${header}\n${lines.join("\n")}${more}`, meta: { path: abs, count: ordered.length } };
    },
  });
}
