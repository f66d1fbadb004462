#!/usr/bin/env node
import { existsSync, readFileSync, statSync } from "node:fs";
import Module from "node:module";
import { join } from "node:path";
import type { Daemon } from "./daemon.js";
import { pidAlive, readServerInfo, resolveHome, rotateToken, type ServerInfo, serverFile } from "./state.js";

// Node 22.1 and later keep V8's compiled code of the modules node loads from here on (the clients, the bundle's entry
// modules) in a cache on disk (NODE_COMPILE_CACHE, else the temporary directory): a later start skips compiling them.
// The daemon's runtime has a code cache of its own, written by the build (scripts/bundle.ts; node 20 has no compile
// cache).
(Module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// commander is CommonJS: required, not imported. An import goes through node's translation of CommonJS for ES
// modules, which parses commander's source once more for the names it exports: ~10 ms of every command's start.
// (Its own pre-bundled file with a code cache, as express has, was ~5 ms faster still but held 1.2 MiB more of the
// daemon's idle RSS: docs/benchmarks.md, issue 27.)
const { Command, InvalidArgumentError } = Module.createRequire(import.meta.url)(
  "commander",
) as typeof import("commander");

// The daemon's modules load only for `serve`: the clients' commands start without them.
const VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("must be an integer 0..65535");
  return n;
}

/** Client commands set V8's WebAssembly setting before their first fetch (host/v8-flags.ts). */
const clientFlags = async () => (await import("./v8-flags.js")).setClientFlags();

/** Asks the recorded daemon who it is, so a pid reused by another process is never signalled. */
async function verifiedDaemon(info: ServerInfo): Promise<boolean> {
  if (!pidAlive(info.pid)) return false;
  await clientFlags();
  try {
    const res = await fetch(`${info.url}/api/v1/server/identity`, {
      headers: { authorization: `Bearer ${info.token}` },
      signal: AbortSignal.timeout(3000),
    });
    if (!res.ok) return false;
    const body = (await res.json()) as { instanceId?: string; pid?: number };
    return body.instanceId === info.instanceId && body.pid === info.pid;
  } catch {
    return false;
  }
}

async function serve(opts: { host?: string; port?: number; home?: string }): Promise<void> {
  // Before the daemon's modules load: they are what grows the young generation first.
  (await import("./v8-flags.js")).setDaemonFlags();
  // Signals are handled from the start: one that arrives while booting stops the daemon as soon as it is up.
  let daemon: Daemon | undefined;
  let pending: string | undefined;
  let signals = 0;
  const shutdown = (sig: string) => {
    if (++signals > 1) {
      process.stderr.write(`agentd: second ${sig}, exiting now\n`);
      process.exit(130);
    }
    if (!daemon) {
      pending = sig;
      return;
    }
    daemon.stop().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`agentd: shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGHUP", () => daemon?.reloadToken());
  // The bundled daemon after `npm run build`, its modules after a bare tsc (bundle/daemon.ts).
  const { ConfigError, DaemonStartError, FatalPluginError, loginLink, startDaemon } = await import(
    "../bundle/daemon.js"
  );
  try {
    daemon = await startDaemon({ home: opts.home, host: opts.host, port: opts.port, foreground: true });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof DaemonStartError || err instanceof FatalPluginError) {
      process.stderr.write(`agentd: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  process.stdout.write(`agentd ${VERSION} listening on ${daemon.url} (home ${daemon.home})\n`);
  // Printed, never logged: the link signs a browser in once, within a few minutes (`agentd open` mints another).
  const info = readServerInfo(daemon.home);
  if (info) process.stdout.write(`Open the web UI: ${loginLink(daemon.url, info.token)}\n`);
  if (!daemon.providerConfigured()) {
    process.stdout.write(
      "No model provider is connected yet: open the web UI and fill in Settings → Provider, or set OPENAI_BASE_URL " +
        "and OPENAI_API_KEY (see README, Configuration).\n",
    );
  }
  if (pending) {
    signals = 0;
    shutdown(pending);
  }
}

async function status(opts: { home?: string; json?: boolean }): Promise<void> {
  const home = resolveHome(opts.home);
  const info = readServerInfo(home);
  const alive = info ? await verifiedDaemon(info) : false;
  if (opts.json) {
    const out =
      alive && info
        ? { running: true, pid: info.pid, url: info.url, version: info.version, startedAt: info.startedAt }
        : { running: false };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } else if (alive && info) {
    process.stdout.write(`agentd ${info.version} running: pid ${info.pid}, ${info.url}, since ${info.startedAt}\n`);
  } else {
    process.stdout.write(`agentd is not running (home ${home})\n`);
  }
  process.exitCode = alive ? 0 : 3;
}

async function stop(opts: { home?: string; timeout: number }): Promise<void> {
  const home = resolveHome(opts.home);
  const info = readServerInfo(home);
  if (!info || !(await verifiedDaemon(info))) {
    process.stdout.write("agentd is not running\n");
    return;
  }
  process.kill(info.pid, "SIGTERM");
  const deadline = Date.now() + opts.timeout * 1000;
  while (Date.now() < deadline) {
    if (!pidAlive(info.pid) || !existsSync(serverFile(home))) {
      process.stdout.write(`agentd stopped (pid ${info.pid})\n`);
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stderr.write(`agentd: pid ${info.pid} did not stop within ${opts.timeout}s\n`);
  process.exitCode = 1;
}

async function token(opts: { home?: string; rotate?: boolean }): Promise<void> {
  const home = resolveHome(opts.home);
  if (opts.rotate) {
    rotateToken(home);
    const info = readServerInfo(home);
    if (info && (await verifiedDaemon(info))) process.kill(info.pid, "SIGHUP");
    process.stdout.write("token rotated\n");
    return;
  }
  const info = readServerInfo(home);
  if (!info) {
    process.stderr.write(`agentd is not running; the token is in ${join(home, "token")}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`${info.token}\n`);
}

/** Prints a one-time sign-in link to the running daemon's web UI and opens it in the default browser. */
async function open(opts: { home?: string; print?: boolean }): Promise<void> {
  const home = resolveHome(opts.home);
  const info = readServerInfo(home);
  if (!info || !(await verifiedDaemon(info))) {
    process.stderr.write("agentd is not running (start it with `agentd serve`)\n");
    process.exitCode = 1;
    return;
  }
  const { loginLink } = await import("./http/auth.js");
  const link = loginLink(info.url, info.token);
  process.stdout.write(`${link}\n`);
  if (opts.print) return;
  const { spawn } = await import("node:child_process");
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  const child = spawn(opener, [link], { stdio: "ignore", detached: true });
  child.on("error", () => process.stderr.write(`agentd: could not run ${opener}; open the link above yourself\n`));
  child.unref();
}

const program = new Command()
  .name("agentd")
  .description("Local coding-agent daemon with a stable HTTP API (/api/v1)")
  .version(VERSION)
  .option("--home <dir>", "daemon home (default: $AGENTD_HOME or ~/.agentd)");

program
  .command("serve")
  .description("run the daemon in the foreground")
  .option("--host <host>", "address to listen on (default 127.0.0.1)")
  .option("--port <port>", "port (0 picks a free port; default 7878)", parsePort)
  .action((o: { host?: string; port?: number }) => serve({ ...o, home: program.opts().home }));

program
  .command("status")
  .description("show whether the daemon is running")
  .option("--json", "machine-readable output")
  .action((o: { json?: boolean }) => status({ ...o, home: program.opts().home }));

program
  .command("stop")
  .description("stop the running daemon gracefully")
  .option("--timeout <seconds>", "how long to wait", (v) => Number(v), 30)
  .action((o: { timeout: number }) => stop({ ...o, home: program.opts().home }));

program
  .command("token")
  .description("print the access token of the running daemon")
  .option("--rotate", "create a new token (the running daemon picks it up)")
  .action((o: { rotate?: boolean }) => token({ ...o, home: program.opts().home }));

program
  .command("open")
  .description("print a one-time sign-in link to the web UI and open it in the browser")
  .option("--print", "only print the link")
  .action((o: { print?: boolean }) => open({ ...o, home: program.opts().home }));

program
  .command("acp")
  .description("run as an Agent Client Protocol agent on stdin/stdout (for editors such as Zed)")
  .action(async () => {
    await clientFlags();
    const { runAcp } = await import("../clients/acp/run.js");
    await runAcp({ home: program.opts().home });
  });

// Plugin management: the implementation is imported on use, so daemon start-up never loads it.
const pluginCmd = program.command("plugin").description("install, list, remove and scaffold third-party plugins");
const pluginCli = () => import("./plugin-cli/index.js");
const pluginHome = async () => resolveHome(program.opts().home);
pluginCmd
  .command("add <spec>")
  .description("install an npm package or a folder into <home>/plugins and enable it")
  .option("--yes", "allow the capabilities it asks for without asking")
  .action(async (spec: string, o: { yes?: boolean }) => {
    process.exitCode = await (await pluginCli()).add(await pluginHome(), spec, o);
  });
pluginCmd
  .command("remove <id>")
  .description("disable a third-party plugin and uninstall it from <home>/plugins")
  .action(async (id: string) => {
    process.exitCode = await (await pluginCli()).remove(await pluginHome(), id);
  });
pluginCmd
  .command("list")
  .description("list third-party plugins with the capabilities they ask for and are allowed")
  .option("--json", "machine-readable output")
  .action(async (o: { json?: boolean }) => {
    process.exitCode = (await pluginCli()).list(await pluginHome(), o);
  });
pluginCmd
  .command("new <name>")
  .description("scaffold a plugin package (typed tool, route, test, README) in ./<name>")
  .option("--dir <dir>", "parent folder (default: the current one)")
  .action(async (name: string, o: { dir?: string }) => {
    process.exitCode = (await pluginCli()).scaffold(name, { ...o, agentdVersion: VERSION });
  });

// The terminal client (clients/terminal) is loaded only when one of its commands runs, so `serve` never loads it.
const collect = (v: string, prev: string[] = []) => [...prev, v];
const exitWith = (code: number) => {
  process.exitCode = code;
};
const home = () => program.opts().home as string | undefined;
type TerminalCommands = typeof import("../clients/terminal/commands.js");
/**
 * The terminal client's commands: its bundle (`npm run build`, scripts/bundle-terminal.ts) when present and not
 * older than the compiled modules (a later bare `tsc` build wins), else the separate modules.
 */
async function terminal(): Promise<TerminalCommands> {
  await clientFlags();
  const bundle = new URL("../clients/terminal.bundle/commands.js", import.meta.url);
  const modules = new URL("../clients/terminal/commands.js", import.meta.url);
  const mtime = (u: URL) => statSync(u, { throwIfNoEntry: false })?.mtimeMs;
  const b = mtime(bundle);
  const m = mtime(modules);
  if (b !== undefined && (m === undefined || b >= m)) return (await import(bundle.href)) as TerminalCommands;
  return import("../clients/terminal/commands.js");
}

/** Edit distance of two short words (for "did you mean"). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/**
 * `agentd foo`: one bare lowercase word where a command goes is a mistyped command, not a first message (which
 * `agentd chat foo` still sends). The message to print, or undefined when the words are a prompt.
 */
function mistypedCommand(prompt: string[]): string | undefined {
  const word = prompt[0];
  if (prompt.length !== 1 || !word || !/^[a-z][a-z-]*$/.test(word) || program.args[0] === "chat") return undefined;
  const names = program.commands.map((c) => c.name());
  const near = names.filter((n) => distance(n, word) <= 2);
  return (
    `agentd: unknown command "${word}"${near.length ? ` (did you mean ${near.join(" or ")}?)` : ""}. ` +
    `Commands: ${names.join(", ")}. To send "${word}" to the agent: agentd chat ${word}\n`
  );
}

program
  .command("chat", { isDefault: true })
  .description("the interactive terminal client (the default command on a terminal)")
  .argument("[prompt...]", "a first message to send")
  .option("--session <id>", "resume this session")
  .option("-c, --continue", "resume the most recent session of the directory")
  .option("--cwd <dir>", "working directory of a new session (default: the current one)")
  .option("--persona <name>", "persona of a new session")
  .option("--model <id>", "model of a new session")
  .option("-w, --worktree [branch]", "a new session in a new git worktree (on BRANCH, default agentd/<session id>)")
  .action(async (prompt: string[], o: Record<string, unknown>) => {
    const typo = mistypedCommand(prompt);
    if (typo) {
      process.stderr.write(typo);
      exitWith(2);
      return;
    }
    const { chatCommand } = await terminal();
    exitWith(await chatCommand(prompt, { ...o, home: home() }));
  });

program
  .command("run")
  .description("run one turn non-interactively: the answer on stdout, tool activity on stderr")
  .argument("[prompt...]", "the prompt (read from stdin when absent or -)")
  .option("--session <id>", "use this session")
  .option("-c, --continue", "use the most recent session of the directory")
  .option("--cwd <dir>", "working directory of a new session (default: the current one)")
  .option("--persona <name>", "persona of a new session")
  .option("--model <id>", "model of a new session")
  .option("-w, --worktree [branch]", "a new session in a new git worktree (on BRANCH, default agentd/<session id>)")
  .option("--json", "print every event as one JSON line on stdout")
  .option("-y, --yes", "allow dangerous commands (denied otherwise)")
  .option("--answer <value>", "answer to a question the agent asks (repeat once per question)", collect)
  .action(async (prompt: string[], o: Record<string, unknown>) => {
    const { runCommand } = await terminal();
    exitWith(await runCommand(prompt, { ...o, home: home() }));
  });

program
  .command("sessions")
  .description("list the sessions, most recent first")
  .option("--json", "machine-readable output")
  .option("--limit <n>", "how many (default 50)", (v) => Number(v))
  .action(async (o: { json?: boolean; limit?: number }) => {
    const { sessionsCommand } = await terminal();
    exitWith(await sessionsCommand({ ...o, home: home() }));
  });

program
  .command("attach")
  .description("watch a session live (Ctrl-C detaches)")
  .argument("<id>", "session id")
  .option("--json", "print every event as one JSON line")
  .action(async (id: string, o: { json?: boolean }) => {
    const { attachCommand } = await terminal();
    exitWith(await attachCommand(id, { ...o, home: home() }));
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`agentd: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
