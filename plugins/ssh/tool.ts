import { defineTool, T, type ToolContext, type ToolDefinition, type ToolResult, toolError } from "../../core/index.js";
import { type RunResult, runProcess } from "./run.js";
import type { SshStore } from "./store.js";
import type { SshHost } from "./validate.js";

export interface SshToolOptions {
  binary: string;
  defaultTimeoutSec: number;
  maxOutputBytes: number;
  connectTimeoutSec: number;
  /** all: every remote command is confirmed; dangerous: only those the shell classifier flags. */
  confirm: "all" | "dangerous";
}

export const DEFAULT_SSH_TOOL_OPTIONS: SshToolOptions = {
  binary: "ssh",
  defaultTimeoutSec: 180,
  maxOutputBytes: 128 * 1024,
  connectTimeoutSec: 15,
  confirm: "all",
};

const MAX_TIMEOUT_SEC = 3600;

/** What ssh needs from the daemon's environment; the rest (provider keys, tokens) stays out of the child. */
const ENV_KEEP = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SSH_AUTH_SOCK",
  "SSH_AGENT_PID",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TMPDIR",
  "XDG_RUNTIME_DIR",
];

function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ENV_KEEP) if (process.env[k] !== undefined) env[k] = process.env[k];
  return env;
}

/** The ssh argument vector: options, then the destination, then `--` so the command can never become an option. */
export function sshArgs(
  h: SshHost,
  identity: string | undefined,
  command: string,
  connectTimeoutSec: number,
): string[] {
  const args = ["-p", String(h.port), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new"];
  args.push("-o", `ConnectTimeout=${connectTimeoutSec}`, "-T");
  if (identity) args.push("-i", identity, "-o", "IdentitiesOnly=yes");
  args.push(h.user ? `${h.user}@${h.host}` : h.host, "--", command);
  return args;
}

function formatOutput(r: RunResult): string {
  const parts: string[] = [];
  if (r.droppedBytes > 0) parts.push(`[output truncated: the first ${r.droppedBytes} bytes were dropped]`);
  if (r.stdout) parts.push(r.stdout.replace(/\n$/, ""));
  if (r.stderr) parts.push(`[stderr]\n${r.stderr.replace(/\n$/, "")}`);
  if (!r.stdout && !r.stderr) parts.push("(no output)");
  return parts.join("\n");
}

/** The tool result for a finished ssh process: its output, or a failure the model can act on. */
function toResult(r: RunResult, h: SshHost, timeoutSec: number, binary: string): ToolResult {
  const meta = { host: h.name, exitCode: r.exitCode, truncated: r.droppedBytes > 0 };
  if (r.spawnError) {
    return toolError(
      "unavailable",
      `Could not start ${binary}: ${r.spawnError.code ?? r.spawnError.message}`,
      "Install the OpenSSH client, or set pluginOptions.ssh.binary",
      false,
    );
  }
  const out = formatOutput(r);
  if (r.aborted) return toolError("aborted", `Aborted; the ssh process was killed.\n${out}`, "", false, meta);
  if (r.timedOut) {
    return toolError(
      "timeout",
      `Timed out after ${timeoutSec} s; the ssh process was killed.\n${out}`,
      "Use a larger timeout or a faster command",
      true,
      meta,
    );
  }
  if (r.exitCode === 255) {
    return toolError(
      "unavailable",
      `ssh failed to connect or authenticate to ${h.name} (exit 255).\n${out}`,
      "Check the host, key and network",
      true,
      meta,
    );
  }
  if (r.exitCode !== 0) {
    return toolError(
      "execution_failed",
      `${out}\n[exit code ${r.exitCode ?? r.signal}]`,
      "Read the output and fix the command",
      false,
      meta,
    );
  }
  return { content: out, meta };
}

export interface SshToolDeps {
  store: SshStore;
  options: () => SshToolOptions;
  /** Optional classifier of dangerous commands: a reason when the command is risky. */
  classify?: (command: string) => string | undefined;
}

/** Runs a command on a configured host. Every remote command is confirmed by the user in default permission mode. */
export function createSshTool(deps: SshToolDeps): ToolDefinition<{ host: string; command: string; timeout?: number }> {
  return defineTool({
    name: "ssh",
    description:
      "Run a shell command on a configured remote host over SSH (non-interactive, key authentication only). " +
      "`host` is the configured host name, not an address. The user may be asked to confirm the command; " +
      "a command the user declined must not be retried. " +
      "Output is capped; prefer commands with bounded output.",
    parameters: T.Object(
      {
        host: T.String({ minLength: 1, maxLength: 64, description: "Name of a configured SSH host" }),
        command: T.String({ minLength: 1, maxLength: 100_000, description: "Shell command to run on the remote host" }),
        timeout: T.Optional(
          T.Integer({
            minimum: 1,
            maximum: MAX_TIMEOUT_SEC,
            description: "Seconds before the command is killed (default 180)",
          }),
        ),
      },
      { additionalProperties: false },
    ),
    readOnly: false,
    modes: ["build"],
    async execute(args, ctx: ToolContext): Promise<ToolResult> {
      const opts = deps.options();
      const hosts = deps.store.hostsFor(ctx.cwd);
      const found = hosts.find((x) => x.host.name === args.host);
      if (!found) {
        const names = hosts.map((x) => x.host.name);
        return toolError(
          "not_found",
          names.length
            ? `Unknown SSH host "${args.host}". Configured hosts: ${names.join(", ")}`
            : `Unknown SSH host "${args.host}": no SSH hosts are configured`,
          names.length ? `Use one of: ${names.join(", ")}` : "Ask the user to add a host (POST /api/v1/ssh/add)",
          false,
          { hosts: names },
        );
      }
      const h = found.host;
      const identity = deps.store.identity(h, found.projectRoot);
      if (identity.problem)
        return toolError(
          "not_found",
          `Cannot use host "${h.name}": ${identity.problem}`,
          "Ask the user to fix the host's key",
          false,
        );

      const dest = `${h.user ? `${h.user}@` : ""}${h.host}:${h.port}`;
      const danger = deps.classify?.(args.command);
      const reason = danger ? `${danger} (on ${h.name}, ${dest})` : `remote command on ${h.name} (${dest})`;
      const ask = opts.confirm === "all" || danger !== undefined || !deps.classify;
      if (ask && !(await ctx.confirm({ tool: "ssh", command: args.command, reason }))) {
        return toolError(
          "permission_denied",
          `The user did not allow running this command on ${h.name}.`,
          "Do not retry the same command; ask the user how to proceed",
          false,
        );
      }
      if (ctx.signal.aborted) return toolError("aborted", "Aborted before the command started", "", false);

      const timeoutSec = args.timeout ?? opts.defaultTimeoutSec;
      const r = await runProcess(opts.binary, sshArgs(h, identity.file, args.command, opts.connectTimeoutSec), {
        timeoutMs: timeoutSec * 1000,
        maxOutputBytes: opts.maxOutputBytes,
        signal: ctx.signal,
        env: childEnv(),
      });
      return toResult(r, h, timeoutSec, opts.binary);
    },
  });
}
