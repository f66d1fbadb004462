import { lstat, mkdir, readdir, realpath, rmdir, stat, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { type AnyRoute, ApiError, defineRoute, isInside, OkSchema, T, withDirInside } from "../../core/index.js";
import { byDirThenName, type EntryType, EntryTypeSchema, typeOf } from "./entries.js";
import { checkBareName, fsError, realpathOrUndefined } from "./paths.js";

/** Entries listed per directory at most. */
const MAX_LIST = 10_000;

const BrowseEntrySchema = T.Object(
  {
    name: T.String(),
    path: T.String({ description: "Absolute path, to browse into or act on" }),
    type: EntryTypeSchema,
    symlink: T.Optional(T.Literal(true)),
  },
  { title: "BrowseEntry" },
);

const BrowseListing = T.Object(
  {
    path: T.String({ description: "The directory listed (absolute, symbolic links resolved)" }),
    parent: T.Union([T.String(), T.Null()], { description: "null at a root: browsing stops there" }),
    root: T.String({ description: "The permitted root this directory lies in" }),
    roots: T.Array(T.String(), { description: "Every permitted root" }),
    entries: T.Array(BrowseEntrySchema, { description: "Directories first, then by name" }),
    truncated: T.Boolean(),
  },
  { title: "BrowseListing" },
);

const Flag = (description: string) => T.Optional(T.String({ enum: ["1", "0", "true", "false"], description }));
const on = (v: string | undefined) => v === "1" || v === "true";

/** The configured roots (realpath'd, existing, without duplicates), in order. */
export async function resolveRoots(configured: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of configured) {
    const real = await realpathOrUndefined(r);
    if (real && !out.includes(real)) out.push(real);
  }
  return out;
}

/** An absolute client path (`~` is the user's home); `..` and relative paths are refused. */
function absoluteInput(input: string): string {
  if (input.includes("\0")) throw ApiError.badRequest("Invalid path: it contains a NUL byte");
  let p = input.trim();
  if (p === "~" || p.startsWith("~/")) p = path.join(homedir(), p.slice(1));
  if (!path.isAbsolute(p)) throw ApiError.badRequest(`The path must be absolute: ${input}`);
  if (p.split("/").includes("..")) throw ApiError.badRequest(`Invalid path: ".." is not allowed (${input})`);
  return path.resolve(p);
}

function rootOf(roots: string[], abs: string): string | undefined {
  // The most specific root, so `parent` stops at the nearest boundary.
  return roots.filter((r) => isInside(r, abs)).sort((a, b) => b.length - a.length)[0];
}

async function resolveDir(roots: string[], input: string): Promise<{ abs: string; root: string }> {
  const wanted = absoluteInput(input);
  let abs: string;
  try {
    abs = await realpath(wanted);
  } catch (err) {
    throw fsError(err, input);
  }
  const root = rootOf(roots, abs);
  if (!root) throw ApiError.badRequest(`Outside the permitted roots: ${input}`);
  const st = await stat(abs).catch((err) => {
    throw fsError(err, input);
  });
  if (!st.isDirectory()) throw ApiError.badRequest(`Not a directory: ${input}`);
  return { abs, root };
}

/**
 * `roots`: the configured browse roots (the picker's shortcuts, and where DELETE and mkdir may act). `anywhere`: GET
 * lists any directory the daemon's user can read (the default; confining the agent is the sandbox's job, not the
 * picker's); false confines GET to the roots too.
 */
export function browseRoutes(roots: () => Promise<string[]>, anywhere: () => boolean): AnyRoute[] {
  const tags = ["browse"];
  const noRoots = () => ApiError.badRequest("No permitted browse root exists on this machine");
  return [
    defineRoute({
      method: "GET",
      path: "/browse",
      operationId: "browseDirectory",
      summary: "List a directory (for picking a working directory)",
      description:
        "Any directory the daemon's user can read, unless pluginOptions.files.browseAnywhere is false (then only " +
        "inside the roots). Roots: pluginOptions.files.browseRoots, by default the user's home directory and the " +
        "daemon's default working directory; they are the picker's starting points. Directories only unless " +
        "files=1; dot entries hidden unless hidden=1.",
      tags,
      query: T.Object({
        path: T.Optional(T.String({ maxLength: 4096, description: "Absolute path or ~/...; default: the first root" })),
        files: Flag("1: list files too"),
        hidden: Flag("1: include names starting with a dot"),
      }),
      responses: { 200: BrowseListing },
      handler: async ({ query }) => {
        const configured = await roots();
        const open = anywhere();
        // Browsing anywhere: the file system root is one more root, the last resort of `rootOf`.
        const all = open ? [...configured, "/"] : configured;
        const first = all[0];
        if (!first) throw noRoots();
        const { abs, root } = await resolveDir(all, query.path?.trim() ? query.path : first);
        const dirents = await withDirInside(all, abs, (d) => readdir(d.path, { withFileTypes: true })).catch((err) => {
          throw fsError(err, abs);
        });
        const entries: Array<{ name: string; path: string; type: EntryType; symlink?: true }> = [];
        let truncated = false;
        for (const d of dirents) {
          if (!on(query.hidden) && d.name.startsWith(".")) continue;
          const p = path.join(abs, d.name);
          const t = await typeOf(d, p, all, false);
          if (t.type !== "dir" && !on(query.files)) continue;
          if (entries.length >= MAX_LIST) {
            truncated = true;
            break;
          }
          entries.push({ name: d.name, path: p, type: t.type, ...(t.symlink ? { symlink: true as const } : {}) });
        }
        entries.sort(byDirThenName);
        const stops = open ? abs === "/" : all.includes(abs);
        const parent = stops ? null : path.dirname(abs);
        return { body: { path: abs, parent, root, roots: configured, entries, truncated } };
      },
    }),
    defineRoute({
      method: "DELETE",
      path: "/browse",
      operationId: "deleteBrowseEntry",
      summary: "Delete a file or an empty directory inside the permitted roots",
      description: "A root itself (or a directory containing one) is never deleted; a non-empty directory is a 409.",
      tags,
      query: T.Object({ path: T.String({ minLength: 1, maxLength: 4096, description: "Absolute path of the entry" }) }),
      errors: [409],
      responses: { 200: OkSchema },
      handler: async ({ query }) => {
        const all = await roots();
        const wanted = absoluteInput(query.path);
        const name = path.basename(wanted);
        if (wanted === path.dirname(wanted)) throw ApiError.badRequest("Refusing to delete the file system root");
        const parent = await realpath(path.dirname(wanted)).catch((err) => {
          throw fsError(err, query.path);
        });
        if (!rootOf(all, parent)) throw ApiError.badRequest(`Outside the permitted roots: ${query.path}`);
        const abs = path.join(parent, name);
        const st = await lstat(abs).catch((err) => {
          throw fsError(err, query.path);
        });
        if (st.isDirectory()) {
          if (all.some((r) => isInside(abs, r))) {
            throw ApiError.badRequest(`Refusing to delete a browse root: ${query.path}`);
          }
          await withDirInside(all, parent, (d) => rmdir(d.at(name))).catch((err) => {
            throw fsError(err, query.path);
          });
        } else {
          await withDirInside(all, parent, (d) => unlink(d.at(name))).catch((err) => {
            throw fsError(err, query.path);
          });
        }
        return { body: { ok: true as const } };
      },
    }),
    defineRoute({
      method: "POST",
      path: "/browse/mkdir",
      operationId: "browseMkdir",
      summary: "Create a directory inside the permitted roots (409 when the name exists)",
      tags,
      body: T.Object(
        {
          path: T.Optional(
            T.String({ minLength: 1, maxLength: 4096, description: "Parent directory (default: the first root)" }),
          ),
          name: T.String({ minLength: 1, maxLength: 255, description: "Plain name of the new directory" }),
        },
        { additionalProperties: false, title: "BrowseMkdirRequest" },
      ),
      errors: [409],
      responses: {
        200: T.Object(
          { ok: T.Literal(true), path: T.String({ description: "The new directory (absolute)" }) },
          {
            title: "BrowseMkdirResult",
          },
        ),
      },
      handler: async ({ body }) => {
        const all = await roots();
        const first = all[0];
        if (!first) throw noRoots();
        const name = checkBareName(body.name, "folder name");
        const { abs: parent } = await resolveDir(all, body.path ?? first);
        const abs = path.join(parent, name);
        await withDirInside(all, parent, (d) => mkdir(d.at(name))).catch((err) => {
          throw fsError(err, abs);
        });
        return { body: { ok: true as const, path: abs } };
      },
    }),
  ];
}
