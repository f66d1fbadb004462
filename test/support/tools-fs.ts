import { execFileSync } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import type { ToolContext, ToolDefinition, ToolResult } from "../../core/index.js";
import { createFsTools, type FsTools } from "../../plugins/tools-fs/index.js";
import { makeToolContext } from "../../testing/plugin-harness.js";

export const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
export const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);
export const GIF = Buffer.concat([Buffer.from("GIF89a"), Buffer.from([1, 0, 1, 0, 0, 0, 0, 0x3b])]);
export const WEBP = Buffer.concat([
  Buffer.from("RIFF"),
  Buffer.from([26, 0, 0, 0]),
  Buffer.from("WEBPVP8 "),
  Buffer.alloc(14),
]);
export const BIG_ROWS = 1 << 20;
export const ROW_BYTES = 50;

/** `row <n>` padded to exactly ROW_BYTES bytes: a 50 MiB file whose line n is predictable. */
export function row(n: number): string {
  const head = `row ${String(n).padStart(8, "0")} `;
  return `${head}${(n === BIG_ROWS ? "needle-at-the-end" : "").padEnd(ROW_BYTES - head.length - 1, "x")}\n`;
}

export function writeBigFile(file: string): void {
  const fd = openSync(file, "w");
  try {
    const perBlock = 20_000;
    for (let start = 1; start <= BIG_ROWS; start += perBlock) {
      const lines: string[] = [];
      for (let n = start; n < start + perBlock && n <= BIG_ROWS; n++) lines.push(row(n));
      writeSync(fd, lines.join(""));
    }
  } finally {
    closeSync(fd);
  }
}

export function ctxFor(cwd: string, over: Partial<ToolContext> = {}): ToolContext {
  return makeToolContext({ sessionId: "s-fs", cwd, ...over });
}

export function errorOf(result: ToolResult) {
  expect(result.isError, result.content).to.equal(true);
  return result.error ?? expect.fail("error details missing");
}

export function ok(result: ToolResult): string {
  expect(result.isError, result.content).to.not.equal(true);
  return result.content;
}

/** grep -n with context, written the obvious way (whole file in memory): the oracle for the streaming search. */
export function referenceGrep(text: string, pattern: string, before: number, after: number, name: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const clean = lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  const re = new RegExp(pattern, "u");
  const isHit = clean.map((l) => re.test(l));
  const out: string[] = [];
  let lastShown = -1;
  isHit.forEach((hit, h) => {
    if (!hit) return;
    const from = Math.max(h - before, lastShown + 1);
    const to = Math.max(lastShown, Math.min(h + after, clean.length - 1));
    if ((before > 0 || after > 0) && out.length > 0 && from > lastShown + 1) out.push("--");
    for (let i = from; i <= to; i++)
      out.push(`${name}${isHit[i] ? ":" : "-"}${i + 1}${isHit[i] ? ":" : "-"}${clean[i]}`);
    lastShown = to;
  });
  return out;
}

export function git(cwd: string, ...args: string[]): void {
  execFileSync("git", args, { cwd, stdio: "ignore" });
}

/** A workspace (a git repository with text, binary, image, ignored and symlinked files, and a directory outside it) and the fs tools, once for the describe. */
export function toolsFsFixture() {
  const fx = {} as { tmp: string; repo: string; outside: string; tools: FsTools; ctx: ToolContext };
  const run = (tool: ToolDefinition, args: Record<string, unknown>, c: ToolContext = fx.ctx) => tool.execute(args, c);

  before(async () => {
    fx.tmp = await realpath(await mkdtemp(path.join(tmpdir(), "agentd-fs-")));
    fx.repo = path.join(fx.tmp, "repo");
    fx.outside = path.join(fx.tmp, "outside");
    await mkdir(path.join(fx.repo, "src", "nested", "deep"), { recursive: true });
    await mkdir(path.join(fx.repo, "ignored"), { recursive: true });
    await mkdir(path.join(fx.repo, "docs"), { recursive: true });
    await mkdir(fx.outside, { recursive: true });
    git(fx.repo, "init", "-q");
    await writeFile(path.join(fx.repo, ".gitignore"), "ignored/\n*.log\n!keep.log\n");
    await writeFile(
      path.join(fx.repo, "src", "a.ts"),
      "export const alpha = 1;\nexport const beta = 2;\n// TODO: gamma\n",
    );
    await writeFile(
      path.join(fx.repo, "src", "nested", "deep", "b.ts"),
      "import { alpha } from '../../a';\nconsole.log(alpha);\n",
    );
    await writeFile(path.join(fx.repo, "src", "c.js"), "const Needle = 'NEEDLE';\nmodule.exports = Needle;\n");
    await writeFile(path.join(fx.repo, "README.md"), "# Project\n\nSome needle text.\n");
    await writeFile(path.join(fx.repo, "ignored", "hidden.txt"), "needle in an ignored dir\n");
    await writeFile(path.join(fx.repo, "debug.log"), "needle in an ignored log\n");
    await writeFile(path.join(fx.repo, "keep.log"), "needle in a re-included log\n");
    await writeFile(
      path.join(fx.repo, "blob.bin"),
      Buffer.concat([Buffer.from("needle"), Buffer.from([0, 1, 2, 0xff]), Buffer.from("needle")]),
    );
    await writeFile(path.join(fx.repo, "pixel.png"), PNG);
    await writeFile(path.join(fx.repo, "photo.jpg"), JPEG);
    await writeFile(path.join(fx.repo, "anim.gif"), GIF);
    await writeFile(path.join(fx.repo, "pic.webp"), WEBP);
    await writeFile(
      path.join(fx.repo, "latin1.txt"),
      Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6e, 0x61, 0xef, 0x76, 0x65, 0x0a]),
    );
    await writeFile(path.join(fx.repo, "crlf.txt"), "one\r\ntwo\r\nthree\r\n");
    await writeFile(path.join(fx.repo, "empty.txt"), "");
    await writeFile(path.join(fx.outside, "secret.txt"), "TOP-SECRET needle outside the workspace\n");
    await symlink(path.join(fx.outside, "secret.txt"), path.join(fx.repo, "link-out.txt"));
    await symlink(fx.outside, path.join(fx.repo, "linkdir-out"));
    await symlink(path.join(fx.outside, "not-yet.txt"), path.join(fx.repo, "dangling-out.txt"));
    await symlink("src/a.ts", path.join(fx.repo, "link-in.ts"));
    writeBigFile(path.join(fx.repo, "big.txt"));
    await writeFile(path.join(fx.repo, "oneline.min.js"), `${"a".repeat(3 * 1024 * 1024)}needle-far-away\n`);
    execFileSync("mkfifo", [path.join(fx.repo, "pipe")]);
    git(fx.repo, "add", "src/a.ts", ".gitignore");
    fx.tools = createFsTools();
    fx.ctx = ctxFor(fx.repo);
  });

  after(async () => {
    await rm(fx.tmp, { recursive: true, force: true });
  });
  return { fx, run };
}
