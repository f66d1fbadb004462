/*
 * Path policy of the file tools (read, write, edit, ls, glob, grep)
 * ------------------------------------------------------------------
 * 1. A path is taken relative to the session's working directory (`ctx.cwd`) unless it is absolute.
 * 2. It is then resolved the way the OS will: `..` segments, and every symbolic link along the path, through
 *    realpath. For a path that does not exist yet (a file about to be written), the nearest existing ancestor is
 *    realpath'd and the rest appended; a dangling symbolic link is followed to where it points.
 *    The tools then operate on that resolved path, so what was checked is what is opened.
 * 3. The resolved path must lie inside an allowed root:
 *      - read, ls, glob, grep: the working directory, or the OS temporary directory (command output, scratch files);
 *      - write, edit: the working directory only.
 *    Anything else, including a symbolic link inside the project that points outside these roots, is refused with
 *    `outside_workspace`. Listings (glob, grep) never follow symbolic links, so they cannot leak outside content.
 * 4. Plan mode (`ctx.mode === "plan"`): write and edit are allowed only inside the session's plans directory
 *    (`ctx.plansDir`); anything else is refused with `permission_denied`. Reads follow rule 3 unchanged.
 * This is a guard against mistakes and prompt-injected requests, not a sandbox: the shell tool is not bound by it.
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ToolContext, ToolResult } from "../../core/index.js";
import { fail, fsFailure } from "./result.js";

export type Access = "read" | "write";

export interface ResolvedPath {
  /** Absolute, symlink-free path the tool must operate on. */
  abs: string;
  /** How to show it to the model: relative to the working directory when inside it, else absolute. */
  display: string;
  /** The realpath of the working directory (the display base). */
  root: string;
}

export type Resolution = { ok: true; path: ResolvedPath } | { ok: false; result: ToolResult };

const MAX_LINK_HOPS = 40;

/** realpath that also works for paths that do not exist yet (see the policy, rule 2). */
export async function realpathLoose(p: string, hops = 0): Promise<string> {
  try {
    return await realpath(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const realParent = await realpathLoose(parent, hops);
  const here = path.join(realParent, path.basename(p));
  const st = await lstat(here).catch(() => undefined);
  if (st?.isSymbolicLink()) {
    // Dangling link: writing through it would create its target, so the target is what must be checked.
    if (hops >= MAX_LINK_HOPS) throw Object.assign(new Error(`too many symbolic links in ${p}`), { code: "ELOOP" });
    return realpathLoose(path.resolve(realParent, await readlink(here)), hops + 1);
  }
  return here;
}

export function isInside(root: string, p: string): boolean {
  if (p === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return p.startsWith(prefix);
}

let tempRoot: Promise<string | undefined> | undefined;
function osTempRoot(): Promise<string | undefined> {
  tempRoot ??= realpath(tmpdir()).catch(() => undefined);
  return tempRoot;
}

export function displayPath(root: string, abs: string): string {
  if (!isInside(root, abs)) return abs;
  const rel = path.relative(root, abs);
  return rel === "" ? "." : rel.split(path.sep).join("/");
}

/** Resolves a tool's path argument under the policy above; a refusal comes back as a ready tool result. */
export async function resolvePath(ctx: ToolContext, input: string, access: Access): Promise<Resolution> {
  if (input.includes("\0")) {
    return { ok: false, result: fail("invalid_arguments", "the path contains a NUL byte.", "Pass a plain path.") };
  }
  const root = await realpath(ctx.cwd);
  const wanted = path.resolve(root, input.trim() === "" ? "." : input);
  let abs: string;
  try {
    abs = await realpathLoose(wanted);
  } catch (err) {
    return { ok: false, result: fsFailure(err, input) };
  }

  const roots = [root];
  if (access === "read") {
    const tmp = await osTempRoot();
    if (tmp) roots.push(tmp);
  }
  if (!roots.some((r) => isInside(r, abs))) {
    const via = abs === wanted ? "" : ` (it resolves to ${abs})`;
    const where = access === "read" ? "the working directory or the temporary directory" : "the working directory";
    return {
      ok: false,
      result: fail(
        "outside_workspace",
        `${input} is outside ${where}${via}; ${access === "read" ? "reading" : "writing"} there is not allowed.`,
        access === "read"
          ? `Use a path inside ${root}. To inspect files elsewhere, ask the user to copy them into the project.`
          : `Write inside ${root} only (a relative path such as "notes/file.txt").`,
      ),
    };
  }

  if (access === "write" && ctx.mode === "plan") {
    const plans = await realpathLoose(path.resolve(root, ctx.plansDir)).catch(() => undefined);
    if (!plans || !isInside(plans, abs) || abs === plans) {
      const plansDisplay = plans ? displayPath(root, plans) : ctx.plansDir;
      return {
        ok: false,
        result: fail(
          "permission_denied",
          `the session is in plan mode: project files are read-only, so ${input} cannot be changed.`,
          `Write your plan as a Markdown file inside ${plansDisplay} (for example ${plansDisplay}/plan.md), ` +
            "and make project changes after the user switches back to build mode.",
        ),
      };
    }
  }
  return { ok: true, path: { abs, display: displayPath(root, abs), root } };
}
