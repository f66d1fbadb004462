import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { createFsTools } from "../plugins/tools-fs/index.js";
import { fsFailure } from "../plugins/tools-fs/result.js";
import { BIG_ROWS, ctxFor, errorOf, GIF, JPEG, ok, PNG, toolsFsFixture, WEBP } from "./support/tools-fs.js";

describe("tools-fs", function () {
  this.timeout(60_000);
  const { fx, run } = toolsFsFixture();

  describe("read", () => {
    it("returns numbered lines and pages with offset and limit", async () => {
      const all = ok(await run(fx.tools.read, { path: "src/a.ts" }));
      expect(all.split("\n")).to.deep.equal([
        "     1\texport const alpha = 1;",
        "     2\texport const beta = 2;",
        "     3\t// TODO: gamma",
      ]);
      const page = await run(fx.tools.read, { path: "src/a.ts", offset: 2, limit: 1 });
      expect(ok(page)).to.match(/^ {5}2\texport const beta = 2;\n\n\[Showing lines 2-2 of 3\. Call read with offset=3/);
      expect(page.meta).to.include({ startLine: 2, endLine: 2, totalLines: 3, truncated: true });
    });

    it("refuses an offset past the end, and says how long the file is", async () => {
      const res = await run(fx.tools.read, { path: "src/a.ts", offset: 10 });
      expect(errorOf(res).code).to.equal("invalid_arguments");
      expect(res.content).to.include("3 lines");
    });

    it("strips CRLF, reads empty files, and decodes invalid UTF-8 without failing", async () => {
      expect(ok(await run(fx.tools.read, { path: "crlf.txt" }))).to.not.include("\r");
      expect(ok(await run(fx.tools.read, { path: "empty.txt" }))).to.include("empty");
      expect(ok(await run(fx.tools.read, { path: "latin1.txt" })))
        .to.include("caf\uFFFD")
        .and.include("na\uFFFDve");
    });

    it("pages through a 50 MiB file with bounded output and a note", async () => {
      const first = await run(fx.tools.read, { path: "big.txt" });
      const text = ok(first);
      expect(Buffer.byteLength(text)).to.be.at.most(128 * 1024 + 512);
      expect(text)
        .to.include("     1\trow 00000001 ")
        .and.include("  2000\trow 00002000 ")
        .and.not.include("row 00002001");
      expect(text).to.include("[Showing lines 1-2000 of 1048576. Call read with offset=2001 to continue.]");
      expect(first.meta).to.include({ startLine: 1, endLine: 2000, totalLines: BIG_ROWS, truncated: true });
      const clamped = await run(fx.tools.read, { path: "big.txt", limit: 1_000_000 });
      expect(clamped.meta).to.include({ startLine: 1, endLine: 2000 });
      const deep = ok(await run(fx.tools.read, { path: "big.txt", offset: BIG_ROWS, limit: 5 }));
      expect(deep).to.include(`${BIG_ROWS}\trow ${String(BIG_ROWS).padStart(8, "0")} needle-at-the-end`);
    });

    it("truncates a huge single line instead of loading it", async () => {
      const res = await run(fx.tools.read, { path: "oneline.min.js" });
      const text = ok(res);
      expect(text.length).to.be.below(5_000);
      expect(text).to.include("[line truncated: 3.0 MiB in total]").and.include("longer than 2000 characters");
    });

    it("caps output by lines and by bytes with small limits", async () => {
      const small = createFsTools({ readMaxLines: 100, readMaxBytes: 1_000 });
      const res = await run(small.read, { path: "big.txt", offset: 10 });
      const text = ok(res);
      expect(Buffer.byteLength(text.split("\n\n[")[0] ?? "")).to.be.at.most(1_000);
      expect(text).to.include("Output capped by size").and.include("offset=");
      const lines = await run(createFsTools({ readMaxLines: 3 }).read, { path: "big.txt" });
      expect(ok(lines)).to.include("Showing lines 1-3 of 1048576").and.include("offset=4");
    });

    for (const [file, mime, bytes] of [
      ["pixel.png", "image/png", PNG],
      ["photo.jpg", "image/jpeg", JPEG],
      ["anim.gif", "image/gif", GIF],
      ["pic.webp", "image/webp", WEBP],
    ] as const) {
      it(`attaches ${mime} images as a data URL`, async () => {
        const res = await run(fx.tools.read, { path: file });
        ok(res);
        expect(res.images).to.have.length(1);
        const url = res.images?.[0]?.dataUrl ?? "";
        expect(url.startsWith(`data:${mime};base64,`)).to.equal(true);
        expect(Buffer.from(url.split(",")[1] ?? "", "base64").equals(bytes)).to.equal(true);
        expect(res.content).to.include(file).and.include(mime);
      });
    }

    it("refuses images over the size cap with too_large", async () => {
      const res = await run(createFsTools({ readMaxImageBytes: 10 }).read, { path: "pixel.png" });
      expect(errorOf(res).code).to.equal("too_large");
      expect(res.images).to.equal(undefined);
    });

    it("refuses binary files, directories, special files and missing files with clear errors", async () => {
      const bin = await run(fx.tools.read, { path: "blob.bin" });
      expect(errorOf(bin).code).to.equal("invalid_arguments");
      expect(bin.content).to.include("blob.bin is a binary file");
      const dir = await run(fx.tools.read, { path: "src" });
      expect(errorOf(dir).code).to.equal("invalid_arguments");
      expect(dir.content).to.include("src is a directory");
      expect(dir.error?.suggestedFix).to.include("ls");
      const fifo = await run(fx.tools.read, { path: "pipe" });
      expect(errorOf(fifo).code).to.equal("invalid_arguments");
      expect(fifo.content).to.include("not a regular file");
      const missing = await run(fx.tools.read, { path: "src/nope.ts" });
      expect(errorOf(missing).code).to.equal("not_found");
      expect(missing.content).to.include("src/nope.ts");
    });

    it("validates arguments and honours an aborted signal", async () => {
      expect(errorOf(await run(fx.tools.read, { path: "src/a.ts", offset: 0 })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(fx.tools.read, { path: 42 })).code).to.equal("invalid_arguments");
      const ac = new AbortController();
      ac.abort();
      expect(
        errorOf(await run(fx.tools.read, { path: "big.txt" }, ctxFor(fx.repo, { signal: ac.signal }))).code,
      ).to.equal("aborted");
    });

    it("maps permission errors to permission_denied", () => {
      const denied = fsFailure(Object.assign(new Error("EACCES"), { code: "EACCES" }), "x.txt");
      expect(denied.error?.code).to.equal("permission_denied");
      expect(denied.content).to.include("x.txt");
      expect(fsFailure(Object.assign(new Error("EPERM"), { code: "EPERM" }), "y").error?.code).to.equal(
        "permission_denied",
      );
    });

    it("reports an unreadable file as permission_denied, and grep names it instead of failing", async function () {
      if (process.getuid?.() === 0) this.skip(); // root reads mode-000 files
      await mkdir(path.join(fx.repo, "locked"), { recursive: true });
      const file = path.join(fx.repo, "locked", "locked.txt");
      await writeFile(file, "needle", { mode: 0o000 });
      try {
        expect(errorOf(await run(fx.tools.read, { path: "locked/locked.txt" })).code).to.equal("permission_denied");
        expect(ok(await run(fx.tools.grep, { pattern: "needle", path: "locked" }))).to.include(
          "Could not read 1 file: locked/locked.txt",
        );
      } finally {
        await rm(path.join(fx.repo, "locked"), { recursive: true, force: true });
      }
    });
  });
});
