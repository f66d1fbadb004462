import { lstat } from "node:fs/promises";
import path from "node:path";
import {
  defineTool,
  EditorGoneError,
  mkdirInside,
  readFileInside,
  T,
  type ToolDefinition,
  toolError,
  writeFileInside,
} from "../../core/index.js";
import { formatBytes, plural } from "./content.js";
import { displayPath, resolvePath } from "./paths.js";
import { fsFailure } from "./result.js";

export function countLines(text: string): number {
  if (text === "") return 0;
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n - 1 : n;
}

export function createWriteTool(): ToolDefinition {
  return defineTool({
    name: "write",
    description:
      "Write a file with the given content, replacing it if it exists (creates missing parent directories). " +
      "Paths are relative to the working directory. Prefer edit for changing part of an existing file. " +
      "In plan mode only files inside the session's plans directory can be written.",
    parameters: T.Object(
      {
        path: T.String({ minLength: 1, description: "File path, relative to the working directory or absolute." }),
        content: T.String({ description: "The complete new content of the file." }),
      },
      { additionalProperties: false },
    ),
    async execute(args, ctx) {
      const input = args.path;
      const content = args.content;
      const resolved = await resolvePath(ctx, input, "write");
      if (!resolved.ok) return resolved.result;
      const { abs, display, root, roots } = resolved.path;
      const bytes = Buffer.byteLength(content);
      const data = Buffer.from(content);

      let previous: number | undefined;
      try {
        const st = await lstat(abs).catch((err: NodeJS.ErrnoException) => {
          if (err.code === "ENOENT") return undefined;
          throw err;
        });
        if (st?.isDirectory()) {
          return toolError(
            "invalid_arguments",
            `${display} is a directory.`,
            "Write to a file path inside it instead.",
          );
        }
        if (st && !st.isFile())
          return toolError("invalid_arguments", `${display} is not a regular file.`, "Pick another path.");
        if (st) {
          previous = st.size;
          if (st.size === bytes && (await readFileInside(roots, abs)).equals(data)) {
            return {
              content: `${display} already has this content (${formatBytes(bytes)}); nothing was written.`,
              meta: { path: abs, created: false, changed: false, bytes },
            };
          }
        }
        ctx.signal.throwIfAborted();
        const madeDir = await mkdirInside(roots, path.dirname(abs));
        // Through the verified parent directory, never through a link swapped in meanwhile (core/confined-fs).
        // Through the editor when one is attached (its buffer is updated too); on the disk when it is gone.
        const viaEditor = ctx.editor?.write
          ? await ctx.editor.write(abs, content).then(
              () => "written" as const,
              (err: Error) => (err instanceof EditorGoneError ? ("gone" as const) : err.message),
            )
          : "gone";
        if (viaEditor === "gone") await writeFileInside(roots, abs, data);
        else if (viaEditor !== "written") {
          return toolError("permission_denied", `The editor did not write ${display}: ${viaEditor}`, "Ask the user.");
        }
        const lines = plural(countLines(content), "line");
        const dirs = madeDir ? ` Created directory ${displayPath(root, madeDir)}.` : "";
        const summary =
          previous === undefined
            ? `Created ${display} (${plural(bytes, "byte")}, ${lines}).${dirs}`
            : `Overwrote ${display} (${plural(bytes, "byte")}, ${lines}; previously ${plural(previous, "byte")}).`;
        return { content: summary, meta: { path: abs, created: previous === undefined, changed: true, bytes } };
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        return fsFailure(err, display);
      }
    },
  });
}
