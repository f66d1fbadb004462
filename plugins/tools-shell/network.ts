import { basename } from "./argv.js";

/** Programs that exist to reach other machines. */
const ALWAYS = new Set([
  "curl",
  "wget",
  "ssh",
  "scp",
  "sftp",
  "rsync",
  "nc",
  "ncat",
  "netcat",
  "telnet",
  "ftp",
  "ping",
  "dig",
  "nslookup",
  "host",
  "http",
  "https",
  "xh",
  "gh",
  "aria2c",
  "socat",
  "npx",
  "bunx",
  "pnpx",
  "docker",
  "podman",
  "kubectl",
  "helm",
]);

/** Subcommands that fetch or publish, per package manager or VCS. */
const SUBCOMMANDS: Record<string, readonly string[]> = {
  git: ["clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote", "lfs"],
  npm: [
    "install",
    "i",
    "ci",
    "add",
    "update",
    "up",
    "publish",
    "audit",
    "outdated",
    "view",
    "info",
    "login",
    "exec",
    "dlx",
    "create",
    "init",
  ],
  pnpm: ["install", "i", "add", "update", "up", "publish", "audit", "outdated", "dlx", "create", "fetch"],
  yarn: ["install", "add", "upgrade", "up", "publish", "audit", "outdated", "dlx", "create", "info"],
  bun: ["install", "i", "add", "update", "upgrade", "publish", "create", "x"],
  pip: ["install", "download", "search", "index"],
  pip3: ["install", "download", "search", "index"],
  pipx: ["install", "run", "upgrade"],
  uv: ["pip", "sync", "add", "lock", "run", "tool", "venv", "python"],
  poetry: ["install", "add", "update", "lock", "publish"],
  cargo: ["install", "fetch", "update", "search", "publish", "add"],
  go: ["get", "install", "mod"],
  gem: ["install", "update", "push", "fetch"],
  bundle: ["install", "update"],
  composer: ["install", "update", "require"],
  apt: ["install", "update", "upgrade", "download", "source"],
  "apt-get": ["install", "update", "upgrade", "download", "source"],
  brew: ["install", "update", "upgrade", "fetch", "tap"],
  deno: ["install", "cache"],
  mvn: ["install", "package", "compile", "dependency:resolve"],
  gradle: ["build", "dependencies"],
};

/** Whether a command is known to need the network (the program and its arguments, wrappers removed). */
export function needsNetwork(args: readonly string[]): boolean {
  if (!args.length) return false;
  const name = basename(args[0]);
  if (ALWAYS.has(name)) return true;
  const subs = SUBCOMMANDS[name];
  if (!subs) return (name === "python" || name === "python3") && args[1] === "-m" && args[2] === "pip";
  const sub = args.slice(1).find((a) => !a.startsWith("-"));
  return sub !== undefined && subs.includes(sub);
}
