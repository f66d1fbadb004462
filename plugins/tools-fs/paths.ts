/*
 * Path policy of the file tools (read, write, edit, ls, glob, grep)
 * ------------------------------------------------------------------
 * 1. A relative path is taken relative to the session's working directory (`ctx.cwd`); an absolute one as is.
 * 2. It is then resolved the way the OS will: `..` segments, and every symbolic link along the path, through
 *    realpath. For a path that does not exist yet (a file about to be written), the nearest existing ancestor is
 *    realpath'd and the rest appended; a dangling symbolic link is followed to where it points.
 *    The tools then operate on that resolved path, so what was checked is what is opened.
 * 3. The resolved path must lie inside the working directory or the session's plans directory (`ctx.plansDir`).
 *    Anything else, including `..` climbing out, and a symbolic link inside the project (the file itself or any
 *    parent directory) that points outside, is refused with `outside_workspace`. Listings (glob, grep) never
 *    follow symbolic links, so they cannot leak outside content either.
 * 4. The plans directory counts as a root only as itself: when it lies under the working directory, its realpath
 *    must too (a committed `.agentd` symlink cannot redirect writes).
 * 5. A path the sandbox hides (`ctx.isHidden`: the daemon home, ~/.ssh, credentials...) is reported as absent,
 *    wherever it lies, and listings leave it out (`ls` here, glob and grep through core/search's `admit`).
 * 6. Plan mode (`ctx.mode === "plan"`): write and edit are allowed only inside the plans directory (created on
 *    demand by the write); anything else is refused with `permission_denied`. Reads follow rule 3 unchanged.
 * The file tools are not processes, so the daemon enforces this itself; the shell tool is confined by the sandbox.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import type { ToolContext, ToolResult } from "../../core/index.js";
import { isInside, toolError } from "../../core/index.js";
import { fsFailure } from "./result.js";

export type Access = "read" | "write";

export interface ResolvedPath {
  /** Absolute, symlink-free path the tool must operate on. */
  abs: string;
  /** How to show it to the model: relative to the working directory when inside it, else absolute. */
  display: string;
  /** The realpath of the working directory (the display base). */
  root: string;
  /** The directories `abs` is confined to (realpaths): every open is verified against them (core/confined-fs). */
  roots: string[];
}

export type Resolution = { ok: true; path: ResolvedPath } | { ok: false; result: ToolResult };

const MAX_LINK_HOPS = 40;

/**
 * realpath that also works for paths that do not exist yet (see the policy, rule 2). Synchronous: the OS's realpath
 * is a few system calls, where a round trip through the thread pool took 0.5-2 ms of every tool call, and tens of ms
 * while a garbage collection or a busy pool held it.
 */
export function realpathLoose(p: string, hops = 0): string {
  try {
    return realpathSync.native(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const realParent = realpathLoose(parent, hops);
  const here = path.join(realParent, path.basename(p));
  if (isLink(here)) {
    // Dangling link: writing through it would create its target, so the target is what must be checked.
    if (hops >= MAX_LINK_HOPS) throw Object.assign(new Error(`too many symbolic links in ${p}`), { code: "ELOOP" });
    return realpathLoose(path.resolve(realParent, readlinkSync(here)), hops + 1);
  }
  return here;
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The realpath of the plans directory when it may serve as a root (policy rule 4), else undefined. */
function plansRoot(root: string, plansDir: string): string | undefined {
  if (!plansDir) return undefined;
  const lexical = path.resolve(root, plansDir);
  let real: string;
  try {
    real = realpathLoose(lexical);
  } catch {
    return undefined;
  }
  if (isInside(root, lexical) && !isInside(root, real)) return undefined;
  return real;
}

export function displayPath(root: string, abs: string): string {
  if (!isInside(root, abs)) return abs;
  const rel = path.relative(root, abs);
  return rel === "" ? "." : rel.split(path.sep).join("/");
}

function outside(input: string, abs: string, wanted: string, root: string, access: Access): ToolResult {
  const via = abs === wanted ? "" : ` (through a symbolic link it resolves to ${abs})`;
  const verb = access === "read" ? "reading" : "writing";
  return toolError(
    "outside_workspace",
    `${input} is outside the working directory ${root}${via}; ${verb} there is not allowed.`,
    access === "read"
      ? `Use a path inside ${root}, e.g. a relative one. To inspect files elsewhere, ask the user to copy them into the project.`
      : `Write inside ${root} only, using a relative path such as "notes/file.txt".`,
  );
}

/** Resolves a tool's path argument under the policy above; a refusal comes back as a ready tool result. */
export async function resolvePath(ctx: ToolContext, input: string, access: Access): Promise<Resolution> {
  if (input.includes("\0")) {
    return { ok: false, result: toolError("invalid_arguments", "the path contains a NUL byte.", "Pass a plain path.") };
  }
  let root: string;
  try {
    root = realpathSync.native(ctx.cwd);
  } catch {
    const message = `the session's working directory ${ctx.cwd} is missing or unreadable.`;
    return {
      ok: false,
      result: toolError("not_found", message, "Ask the user to restore the directory or start a new session."),
    };
  }
  const wanted = path.resolve(root, input.trim() === "" ? "." : input);
  let abs: string;
  try {
    abs = realpathLoose(wanted);
  } catch (err) {
    return { ok: false, result: fsFailure(err, input) };
  }

  // A hidden path (the daemon home, ~/.ssh, credentials) reads as absent, inside the working directory too.
  if (ctx.isHidden?.(abs))
    return { ok: false, result: fsFailure(Object.assign(new Error("hidden"), { code: "ENOENT" }), input) };

  const plans = plansRoot(root, ctx.plansDir);
  if (!isInside(root, abs) && !(plans && isInside(plans, abs))) {
    return { ok: false, result: outside(input, abs, wanted, root, access) };
  }

  if (access === "write" && ctx.mode === "plan" && !(plans && isInside(plans, abs) && abs !== plans)) {
    const plansDisplay = plans ? displayPath(root, plans) : ctx.plansDir;
    return {
      ok: false,
      result: toolError(
        "permission_denied",
        `the session is in plan mode, where project files are read-only, so ${input} cannot be written.`,
        `Write your plan as a Markdown file inside ${plansDisplay} (for example ${plansDisplay}/plan.md); ` +
          "make project changes after the user switches the session back to build mode.",
      ),
    };
  }
  return { ok: true, path: { abs, display: displayPath(root, abs), root, roots: plans ? [root, plans] : [root] } };
}
