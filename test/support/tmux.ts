/**
 * A real terminal for black-box tests of the interactive client: a detached tmux session on a private socket,
 * typed into with send-keys and read with capture-pane. Waiting means polling the screen for a condition with a
 * deadline (the screen is the observable state), never a fixed sleep.
 */
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);

export function hasTmux(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The terminal tests drive a real tmux; without it they fail with what to install (they never skip silently). */
export function requireTmux(): void {
  if (!hasTmux()) throw new Error("the terminal client tests need tmux: apt-get install -y tmux (.ci/run installs it)");
}

/** The environment of the program in the pane: no CI markers (Ink renders only the last frame under CI). */
function paneEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === "CI" || k === "CONTINUOUS_INTEGRATION" || k.startsWith("CI_") || k === "TMUX") continue;
    if (k.startsWith("AGENTD_") || k.startsWith("OPENAI_")) continue;
    env[k] = v;
  }
  return { ...env, TERM: "xterm-256color", LANG: "C.UTF-8", LC_ALL: "C.UTF-8", ...extra };
}

export class TmuxPane {
  /** Files of recorded output, removed by kill(). */
  private readonly files: string[] = [];

  private constructor(
    private readonly socket: string,
    readonly name: string,
  ) {}

  /** Starts `argv` in a new detached tmux session of `width` x `height` cells. */
  static async start(
    argv: string[],
    opts: { width?: number; height?: number; cwd?: string; env?: Record<string, string> } = {},
  ): Promise<TmuxPane> {
    const socket = `agentd-test-${randomBytes(5).toString("hex")}`;
    const pane = new TmuxPane(socket, "t");
    await exec(
      "tmux",
      [
        "-L",
        socket,
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        pane.name,
        "-x",
        String(opts.width ?? 100),
        "-y",
        String(opts.height ?? 30),
        ...(opts.cwd ? ["-c", opts.cwd] : []),
        "--",
        ...argv,
      ],
      { env: paneEnv(opts.env ?? {}) },
    );
    // Keep the pane when the program exits, so its last screen can still be read.
    await pane.tmux("set-option", "-t", pane.name, "remain-on-exit", "on");
    return pane;
  }

  private async tmux(...args: string[]): Promise<string> {
    const { stdout } = await exec("tmux", ["-L", this.socket, ...args]);
    return stdout;
  }

  /** The visible screen as text (trailing spaces trimmed). */
  async screen(): Promise<string> {
    const out = await this.tmux("capture-pane", "-p", "-J", "-t", this.name);
    return out
      .split("\n")
      .map((l) => l.trimEnd())
      .join("\n");
  }

  /** The screen plus the scrollback. */
  async history(): Promise<string> {
    return this.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", this.name);
  }

  /**
   * From now on, keeps everything the program prints, escape sequences included (tmux's pipe-pane into a file of
   * its own). The function returned polls until that output contains `text`, and returns it.
   */
  async record(): Promise<(text: string, timeoutMs?: number) => Promise<string>> {
    const file = join(tmpdir(), `${this.socket}.out`);
    // pipe-pane takes a shell command: only a plain path goes into it.
    if (!/^[\w./-]+$/.test(file)) throw new Error(`TMPDIR gives a path tmux cannot take: ${file}`);
    this.files.push(file);
    await this.tmux("pipe-pane", "-t", this.name, `cat > ${file}`);
    return async (text, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const out = existsSync(file) ? readFileSync(file, "latin1") : "";
        if (out.includes(text)) return out;
        if (Date.now() > deadline) throw new Error(`the program did not print ${text}; it printed:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
  }

  /** Sends keys by tmux name (Enter, Escape, C-c, Up, Tab, ...). */
  async keys(...keys: string[]): Promise<void> {
    await this.tmux("send-keys", "-t", this.name, ...keys);
  }

  /** Types text literally. */
  async type(text: string): Promise<void> {
    await this.tmux("send-keys", "-t", this.name, "-l", text);
  }

  /** Pastes text as a terminal does (one chunk, lines separated by carriage returns). */
  async paste(text: string): Promise<void> {
    await this.tmux("set-buffer", "-b", "agentd-test", "--", text);
    await this.tmux("paste-buffer", "-b", "agentd-test", "-d", "-t", this.name);
  }

  async resize(width: number, height: number): Promise<void> {
    await this.tmux("resize-window", "-t", this.name, "-x", String(width), "-y", String(height));
  }

  /** Whether the program in the pane has exited. */
  async dead(): Promise<boolean> {
    return (await this.tmux("display-message", "-p", "-t", this.name, "#{pane_dead}")).trim() === "1";
  }

  /** Polls until the program in the pane has exited; rejects with the last screen. */
  async waitForExit(timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.dead())) {
      if (Date.now() > deadline) throw new Error(`the program did not exit; screen:\n${await this.history()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Polls the screen until `test` holds (a string: the screen contains it); rejects with the last screen. */
  async waitFor(test: string | RegExp | ((screen: string) => boolean), timeoutMs = 15_000): Promise<string> {
    const check =
      typeof test === "string"
        ? (s: string) => s.includes(test)
        : test instanceof RegExp
          ? (s: string) => test.test(s)
          : test;
    const deadline = Date.now() + timeoutMs;
    let last = "";
    for (;;) {
      last = await this.history();
      if (check(last)) return last;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(test)}; screen:\n${last}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async kill(): Promise<void> {
    await this.tmux("kill-server").catch(() => {});
    // tmux leaves the socket file of a killed server behind.
    const dir = join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${process.getuid?.() ?? 0}`);
    rmSync(join(dir, this.socket), { force: true });
    for (const f of this.files) rmSync(f, { force: true });
  }
}
