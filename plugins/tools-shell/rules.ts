import { basename, display, hasLong, parseOptions } from "./argv.js";
import { BLOCK_DEVICE, DELETERS, SHELLS, shellInvocation } from "./programs.js";

/** Per-command judgements: what a command does with its arguments that needs the user's confirmation. */

export interface RuleContext {
  add(reason: string): void;
  /** Classifies a nested argument vector (`find -exec ...`). */
  argv(args: readonly string[]): void;
  /** Classifies a nested command string (`bash -c ...`). */
  script(src: string): void;
}

export type Rule = (args: readonly string[], cx: RuleContext) => void;

/** Operands that make even a plain `rm` wipe a whole directory (expansions are kept as written by the parser). */
const CRITICAL_TARGETS = new Set(["/", "/*", "~", "~/", "~/*", "*", ".*", ".", "..", "$HOME", "$HOME/*", `\${HOME}`]);
const EVERYTHING = new Set([".", "./", "*", ":/", ":/*", ":(top)", ":(top).", "..", "../", "/"]);

const rm: Rule = (args, cx) => {
  const o = parseOptions(args.slice(1));
  const recursive = o.short.has("r") || o.short.has("R") || hasLong(o, "recursive", 1);
  const force = o.short.has("f") || hasLong(o, "force", 1);
  if (hasLong(o, "no-preserve-root")) cx.add(`deletes without rm's protection of /: ${display(args)}`);
  if (recursive || force) {
    const kind = recursive && force ? "recursive, forced" : recursive ? "recursive" : "forced";
    cx.add(`${kind} delete: ${display(args)}`);
  } else if (o.operands.some((t) => CRITICAL_TARGETS.has(t))) {
    cx.add(`deletes everything in a directory: ${display(args)}`);
  }
};

const shell: Rule = (args, cx) => {
  const { script } = shellInvocation(args);
  if (script !== undefined) cx.script(script);
};

/** How a shell is invoked: the `-c` string, or where it reads its program from (a file operand or stdin). */
/* ---------- git ---------- */

const GIT_GLOBAL_VALUE_OPTIONS = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--super-prefix",
]);

type GitRule = (rest: readonly string[], args: readonly string[], cx: RuleContext) => void;

const GIT_RULES: Record<string, GitRule> = {
  push(rest, args, cx) {
    const o = parseOptions(rest, {
      shortWithValue: "o",
      longWithValue: ["repo", "push-option", "receive-pack", "exec"],
    });
    const keys = [...o.long.keys()];
    const force =
      o.short.has("f") ||
      keys.some(
        (k) => k === "force" || k.startsWith("force-with-lease") || k === "force-if-includes" || k === "mirror",
      ) ||
      o.operands.slice(1).some((ref) => ref.startsWith("+"));
    if (force) cx.add(`force-pushes, which can overwrite history on the remote: ${display(args)}`);
    const deletes = o.short.has("d") || keys.includes("delete") || keys.includes("prune");
    if (deletes || o.operands.slice(1).some((ref) => ref.startsWith(":") && ref.length > 1)) {
      cx.add(`deletes branches or tags on the remote: ${display(args)}`);
    }
  },
  reset(rest, args, cx) {
    if (parseOptions(rest).long.has("hard")) cx.add(`discards uncommitted changes: ${display(args)}`);
  },
  clean(rest, args, cx) {
    const o = parseOptions(rest, { shortWithValue: "e", longWithValue: ["exclude"] });
    const dryRun = o.short.has("n") || hasLong(o, "dry-run");
    const deletes = ["f", "d", "x", "X"].some((l) => o.short.has(l)) || hasLong(o, "force");
    if (deletes && !dryRun) cx.add(`deletes untracked files: ${display(args)}`);
  },
  checkout(rest, args, cx) {
    const o = parseOptions(rest, { shortWithValue: "bB", longWithValue: ["orphan", "conflict", "pathspec-from-file"] });
    if (o.short.has("f") || hasLong(o, "force")) cx.add(`discards local changes: ${display(args)}`);
    else if (o.operands.some((p) => EVERYTHING.has(p)))
      cx.add(`discards uncommitted changes to every file: ${display(args)}`);
  },
  restore(rest, args, cx) {
    const o = parseOptions(rest, { shortWithValue: "s", longWithValue: ["source", "pathspec-from-file"] });
    const staged = o.short.has("S") || o.long.has("staged");
    const worktree = o.short.has("W") || o.long.has("worktree");
    const everything = o.operands.some((p) => EVERYTHING.has(p));
    if (everything && (!staged || worktree)) cx.add(`discards uncommitted changes to every file: ${display(args)}`);
  },
  stash(rest, args, cx) {
    if (rest[0] === "drop" || rest[0] === "clear") cx.add(`deletes stashed changes: ${display(args)}`);
  },
  branch(rest, args, cx) {
    const o = parseOptions(rest);
    const force = o.short.has("f") || o.long.has("force");
    if (o.short.has("D") || ((o.short.has("d") || o.long.has("delete")) && force)) {
      cx.add(`deletes a branch even if it is not merged: ${display(args)}`);
    }
    if (o.short.has("M") || ((o.short.has("m") || o.long.has("move")) && force)) {
      cx.add(`renames a branch over an existing one: ${display(args)}`);
    }
  },
  reflog(rest, args, cx) {
    if (rest[0] === "expire" || rest[0] === "delete")
      cx.add(`removes reflog entries (the way back to lost commits): ${display(args)}`);
  },
  "filter-branch"(_rest, args, cx) {
    cx.add(`rewrites the repository history: ${display(args)}`);
  },
  "filter-repo"(_rest, args, cx) {
    cx.add(`rewrites the repository history: ${display(args)}`);
  },
};

const git: Rule = (args, cx) => {
  let i = 1;
  while (i < args.length && args[i].startsWith("-")) i += GIT_GLOBAL_VALUE_OPTIONS.has(args[i]) ? 2 : 1;
  const sub = args[i];
  if (sub !== undefined && Object.hasOwn(GIT_RULES, sub)) GIT_RULES[sub](args.slice(i + 1), args, cx);
};

/* ---------- everything else ---------- */

function worldWritable(mode: string): boolean {
  if (/^[0-7]{3,4}$/.test(mode)) return (Number(mode[mode.length - 1]) & 2) !== 0;
  return mode.split(",").some((clause) => {
    const m = /^([ugoa]*)([-+=])([rwxXst]*)$/.exec(clause);
    return !!m && /[oa]/.test(m[1]) && m[2] !== "-" && m[3].includes("w");
  });
}

const chmod: Rule = (args, cx) => {
  let recursive = false;
  const rest: string[] = [];
  for (const a of args.slice(1)) {
    if (a === "--recursive") recursive = true;
    else if (/^-[RcfvHLP]+$/.test(a)) recursive ||= a.includes("R");
    else if (!a.startsWith("--")) rest.push(a);
  }
  if (recursive) cx.add(`changes permissions of a whole tree: ${display(args)}`);
  if (rest[0] !== undefined && worldWritable(rest[0])) cx.add(`makes files writable by every user: ${display(args)}`);
};

const chown: Rule = (args, cx) => {
  const o = parseOptions(args.slice(1));
  if (o.short.has("R") || o.long.has("recursive")) cx.add(`changes ownership of a whole tree: ${display(args)}`);
};

const diskRule: Rule = (args, cx) => cx.add(`formats, wipes or repartitions a disk: ${display(args)}`);

const power: Rule = (args, cx) => cx.add(`shuts down or restarts the machine: ${display(args)}`);

const kill: Rule = (args, cx) => {
  let i = 1;
  let sawSignal = false;
  while (i < args.length) {
    const a = args[i];
    if (a === "--") {
      i++;
      break;
    }
    if (sawSignal || !a.startsWith("-")) break;
    if (a === "-l" || a === "-L" || a === "--list" || a === "--table") return;
    i += a === "-s" || a === "-n" || a === "--signal" ? 2 : 1;
    sawSignal = true;
  }
  const pids = args.slice(i);
  if (pids.includes("-1")) cx.add(`signals every process you own: ${display(args)}`);
  if (pids.includes("1")) cx.add(`signals init (process 1): ${display(args)}`);
};

const byName: Rule = (args, cx) =>
  cx.add(`kills processes by name (possibly unrelated ones, or the agent itself): ${display(args)}`);

function execRule(options: readonly string[], label: string): Rule {
  return (args, cx) => {
    for (let i = 1; i < args.length; i++) {
      const a = args[i];
      if (a === "-delete" && label === "find") cx.add(`deletes every match: ${display(args)}`);
      if (!options.includes(a)) continue;
      let j = i + 1;
      while (j < args.length && args[j] !== ";" && args[j] !== "+") j++;
      const inner = args.slice(i + 1, j);
      if (inner.length && DELETERS.has(basename(inner[0])))
        cx.add(`deletes every match: ${label} ... ${a} ${display(inner)}`);
      if (inner.length) cx.argv(inner);
      i = j;
    }
  };
}

const dd: Rule = (args, cx) => {
  const target = args.find((a) => a.startsWith("of="));
  if (target && target !== "of=/dev/null") cx.add(`writes raw data over ${target.slice(3)}: ${display(args)}`);
};

const crontab: Rule = (args, cx) => {
  if (parseOptions(args.slice(1), { shortWithValue: "u" }).short.has("r"))
    cx.add(`removes all cron jobs: ${display(args)}`);
};

const DOCKER_VALUE_OPTIONS = new Set(["-H", "--host", "-c", "--context", "--config", "-l", "--log-level"]);
const PRUNABLE = new Set(["system", "volume", "image", "container", "network", "builder", "buildx"]);

const docker: Rule = (args, cx) => {
  let i = 1;
  while (i < args.length && args[i].startsWith("-")) i += DOCKER_VALUE_OPTIONS.has(args[i]) ? 2 : 1;
  const [sub, action] = [args[i], args[i + 1]];
  if (PRUNABLE.has(sub) && action === "prune") cx.add(`deletes unused containers, images or volumes: ${display(args)}`);
  if (sub === "volume" && (action === "rm" || action === "remove"))
    cx.add(`deletes volumes and their data: ${display(args)}`);
  if (sub === "compose") composeDown(args.slice(i + 1), args, cx);
};

function composeDown(rest: readonly string[], args: readonly string[], cx: RuleContext): void {
  const down = rest.indexOf("down");
  if (down < 0) return;
  const o = parseOptions(rest.slice(down + 1));
  if (o.short.has("v") || o.long.has("volumes"))
    cx.add(`deletes the project's volumes and their data: ${display(args)}`);
}

function subcommandRule(verbs: readonly string[], what: string): Rule {
  return (args, cx) => {
    const first = args.slice(1).find((a) => !a.startsWith("-"));
    if (first !== undefined && verbs.includes(first)) cx.add(`${what}: ${display(args)}`);
  };
}

const kubectl: Rule = (args, cx) => {
  let i = 1;
  while (i < args.length && args[i].startsWith("-"))
    i += /^-(n|-namespace|-context|-kubeconfig|-cluster|-user|s|-server)$/.test(args[i]) ? 2 : 1;
  if (args[i] === "delete") cx.add(`deletes cluster resources: ${display(args)}`);
};

const rsync: Rule = (args, cx) => {
  if (args.some((a) => a.startsWith("--delete") || a === "--remove-source-files")) {
    cx.add(`deletes files at the destination or source: ${display(args)}`);
  }
};

const firewall: Rule = (args, cx) => {
  if (args.some((a) => a === "-F" || a === "--flush" || a === "-X" || a === "--delete-chain")) {
    cx.add(`flushes firewall rules: ${display(args)}`);
  }
};

const copyLike: Rule = (args, cx) => {
  const operands = parseOptions(args.slice(1)).operands;
  const dest = operands[operands.length - 1];
  if (dest !== undefined && BLOCK_DEVICE.test(dest)) cx.add(`writes over the device ${dest}: ${display(args)}`);
  if (basename(args[0]) === "mv" && dest === "/dev/null" && operands.length > 1)
    cx.add(`destroys the moved files: ${display(args)}`);
};

const tee: Rule = (args, cx) => {
  for (const t of parseOptions(args.slice(1)).operands) {
    if (BLOCK_DEVICE.test(t)) cx.add(`writes over the device ${t}: ${display(args)}`);
  }
};

const RULES = new Map<string, Rule>([
  ["rm", rm],
  ["shred", (args, cx) => cx.add(`overwrites files so they cannot be recovered: ${display(args)}`)],
  ["truncate", (args, cx) => cx.add(`cuts files down (their data is lost): ${display(args)}`)],
  ["git", git],
  ["chmod", chmod],
  ["chown", chown],
  ["chgrp", chown],
  ...[
    "mke2fs",
    "mkswap",
    "wipefs",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "parted",
    "gdisk",
    "sgdisk",
    "blkdiscard",
    "mkntfs",
    "mkdosfs",
  ].map((n): [string, Rule] => [n, diskRule]),
  ["dd", dd],
  ...["shutdown", "reboot", "halt", "poweroff"].map((n): [string, Rule] => [n, power]),
  ...["init", "telinit"].map((n): [string, Rule] => [
    n,
    (args, cx) => (["0", "6"].includes(args[1]) ? power(args, cx) : undefined),
  ]),
  [
    "systemctl",
    subcommandRule(
      ["poweroff", "reboot", "halt", "kexec", "soft-reboot", "emergency", "rescue"],
      "shuts down or restarts the machine",
    ),
  ],
  ["kill", kill],
  ["killall", byName],
  ["killall5", byName],
  ["pkill", byName],
  ["find", execRule(["-exec", "-execdir", "-ok", "-okdir"], "find")],
  ["fd", execRule(["-x", "--exec", "-X", "--exec-batch"], "fd")],
  ["fdfind", execRule(["-x", "--exec", "-X", "--exec-batch"], "fd")],
  ["crontab", crontab],
  ["docker", docker],
  ["podman", docker],
  ["docker-compose", (args, cx) => composeDown(args.slice(1), args, cx)],
  ["kubectl", kubectl],
  ["helm", subcommandRule(["uninstall", "delete"], "removes a release from the cluster")],
  ["terraform", subcommandRule(["destroy"], "destroys managed infrastructure")],
  ...["npm", "pnpm", "yarn", "bun"].map((n): [string, Rule] => [
    n,
    subcommandRule(["publish", "unpublish"], "publishes or unpublishes a package"),
  ]),
  ["cargo", subcommandRule(["publish"], "publishes a crate")],
  ["gem", subcommandRule(["push"], "publishes a gem")],
  ["twine", subcommandRule(["upload"], "publishes a package")],
  ["poetry", subcommandRule(["publish"], "publishes a package")],
  ["rsync", rsync],
  ["iptables", firewall],
  ["ip6tables", firewall],
  ["nft", subcommandRule(["flush"], "flushes firewall rules")],
  ["dropdb", (args, cx) => cx.add(`deletes a database: ${display(args)}`)],
  ["cp", copyLike],
  ["mv", copyLike],
  ["install", copyLike],
  ["tee", tee],
  ["eval", (args, cx) => cx.script(args.slice(1).join(" "))],
  ...[...SHELLS].map((n): [string, Rule] => [n, shell]),
]);

/** The rule for a command name, if it has one. */
export function ruleFor(name: string): Rule | undefined {
  return RULES.get(name) ?? (/^mkfs(\..+)?$/.test(name) ? diskRule : undefined);
}
