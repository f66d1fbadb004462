import { existsSync, statSync } from "node:fs";
import path from "node:path";
import {
  DEFAULT_HIDDEN,
  DEFAULT_WRITABLE,
  ensureDir,
  expandHome,
  gitDirsOf,
  protectedGitPaths,
  real,
} from "./paths.js";

/** What the sandbox exposes, resolved from the config (absolute paths). */
export interface Confinement {
  hidden: readonly string[];
  writable: readonly string[];
}

/** The confinement the config asks for: the built-in hidden list plus the daemon home and `hidden`; the caches. */
export function confinementOf(home: string, opts: { hidden?: string[]; writable?: string[] }): Confinement {
  return {
    hidden: [...new Set([home, ...DEFAULT_HIDDEN, ...(opts.hidden ?? [])].map((p) => real(expandHome(p))))],
    writable: [
      ...DEFAULT_WRITABLE.map(expandHome).filter((d) => ensureDir(d)),
      ...(opts.writable ?? []).map(expandHome),
    ].map(real),
  };
}

type MountOp = { path: string; kind: "hide-dir" | "hide-file" | "bind" | "ro" };

function depth(p: string): number {
  return p.split(path.sep).filter(Boolean).length;
}

function isDir(p: string): boolean | undefined {
  try {
    return statSync(p).isDirectory();
  } catch {
    return undefined;
  }
}

/**
 * bwrap's arguments for one confined process. The whole filesystem is read-only; a private /tmp, the writable
 * directories (by default the working directory and, for a repository, its git directory minus `config` and `hooks`)
 * and the configured ones are writable; hidden paths read as empty. Mounts are applied parents first, so a hidden
 * path inside a writable directory stays hidden and a working directory inside a hidden one stays usable.
 * New PID, IPC, UTS and (without `network`) network namespaces; `--die-with-parent`, so nothing outlives the daemon.
 */
export function bwrapArgs(
  c: Confinement,
  req: { argv: readonly string[]; cwd: string; network: boolean; writable?: readonly string[]; gitWritable?: boolean },
): string[] {
  const args = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts"];
  args.push("--unshare-cgroup-try");
  if (!req.network) args.push("--unshare-net");
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");

  const ops: MountOp[] = [];
  const own = req.writable ?? [req.cwd];
  const git = req.gitWritable === false ? [] : own.flatMap((dir) => gitDirsOf(dir));
  for (const dir of new Set([...own, ...c.writable, ...git])) {
    if (isDir(dir) && dir !== "/" && dir !== "/tmp") ops.push({ path: dir, kind: "bind" });
  }
  for (const g of git) for (const p of protectedGitPaths(g)) ops.push({ path: p, kind: "ro" });
  for (const h of c.hidden) {
    const dir = isDir(h);
    if (dir === undefined) continue;
    ops.push({ path: h, kind: dir ? "hide-dir" : "hide-file" });
  }
  // Parents first (a stable sort keeps binds before the hidden paths of the same depth).
  ops.sort((a, b) => depth(a.path) - depth(b.path));
  for (const op of ops) {
    if (op.kind === "bind") args.push("--bind", op.path, op.path);
    else if (op.kind === "ro") args.push("--ro-bind", op.path, op.path);
    else if (op.kind === "hide-file") args.push("--ro-bind", "/dev/null", op.path);
    else args.push("--tmpfs", op.path);
  }
  // Hidden directories become read-only last, after what is mounted inside them.
  for (const op of ops) if (op.kind === "hide-dir") args.push("--remount-ro", op.path);
  args.push("--chdir", existsSync(req.cwd) ? req.cwd : "/tmp", "--", ...req.argv);
  return args;
}
