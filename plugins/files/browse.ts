import { realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { ApiError, isInside, T } from "../../core/index.js";
import { EntryTypeSchema } from "./entries.js";
import { fsError, realpathOrUndefined } from "./paths.js";

/** Entries listed per directory at most. */
export const MAX_LIST = 10_000;

export const BrowseEntrySchema = T.Object(
  {
    name: T.String(),
    path: T.String({ description: "Absolute path, to browse into or act on" }),
    type: EntryTypeSchema,
    symlink: T.Optional(T.Literal(true)),
  },
  { title: "BrowseEntry" },
);

export const BrowseListing = T.Object(
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

export const Flag = (description: string) => T.Optional(T.String({ enum: ["1", "0", "true", "false"], description }));
export const on = (v: string | undefined) => v === "1" || v === "true";

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
export function absoluteInput(input: string): string {
  if (input.includes("\0")) throw ApiError.badRequest("Invalid path: it contains a NUL byte");
  let p = input.trim();
  if (p === "~" || p.startsWith("~/")) p = path.join(homedir(), p.slice(1));
  if (!path.isAbsolute(p)) throw ApiError.badRequest(`The path must be absolute: ${input}`);
  if (p.split("/").includes("..")) throw ApiError.badRequest(`Invalid path: ".." is not allowed (${input})`);
  return path.resolve(p);
}

export function rootOf(roots: string[], abs: string): string | undefined {
  // The most specific root, so `parent` stops at the nearest boundary.
  return roots.filter((r) => isInside(r, abs)).sort((a, b) => b.length - a.length)[0];
}

export async function resolveDir(roots: string[], input: string): Promise<{ abs: string; root: string }> {
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
 * What the browse routes use. `roots`: the configured browse roots (the picker's shortcuts, and where DELETE and
 * mkdir may act). `anywhere`: GET lists any directory the daemon's user can read (the default; confining the agent
 * is the sandbox's job, not the picker's); false confines GET to the roots too.
 */
export interface BrowseDeps {
  roots: () => Promise<string[]>;
  anywhere: () => boolean;
}

export const tags = ["browse"];
export const noRoots = () => ApiError.badRequest("No permitted browse root exists on this machine");
