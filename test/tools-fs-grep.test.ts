import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import fc from "fast-check";
import { createFsTools } from "../plugins/tools-fs/index.js";
import { BIG_ROWS, ctxFor, errorOf, ok, referenceGrep, row, toolsFsFixture } from "./support/tools-fs.js";

describe("tools-fs", function () {
  this.timeout(60_000);
  const { fx, run } = toolsFsFixture();

  describe("grep", () => {
    it("prints path:line:text, respecting .gitignore and skipping binary files with a note", async () => {
      const res = await run(fx.tools.grep, { pattern: "needle", glob: "*.{md,log,bin}" });
      const text = ok(res);
      expect(text).to.include("README.md:3:Some needle text.").and.include("keep.log:1:needle in a re-included log");
      expect(text).to.not.include("debug.log").and.not.include("hidden.txt");
      expect(text).to.include("[Skipped 1 binary file with matches.]");
      expect(res.meta).to.deep.include({ mode: "content", matches: 2, files: 2, truncated: false });
    });

    it("supports literal, case-insensitive, inline (?i) and Unicode patterns", async () => {
      expect(ok(await run(fx.tools.grep, { pattern: "alpha = 1;", literal: true, path: "src" }))).to.include(
        "src/a.ts:1:",
      );
      expect(ok(await run(fx.tools.grep, { pattern: "a.pha", literal: true, path: "src" }))).to.include("No matches");
      expect(ok(await run(fx.tools.grep, { pattern: "a.pha", path: "src/a.ts" }))).to.include("src/a.ts:1:");
      const ci = ok(await run(fx.tools.grep, { pattern: "needle", ignoreCase: true, path: "src" }));
      expect(ci).to.equal("src/c.js:1:const Needle = 'NEEDLE';\nsrc/c.js:2:module.exports = Needle;");
      expect(ok(await run(fx.tools.grep, { pattern: "(?i)NEEDLE =", path: "src" }))).to.include("src/c.js:1:");
      expect(ok(await run(fx.tools.grep, { pattern: "\\bcaf\\p{L}?", path: "src" }))).to.include("No matches");
      const bad = await run(fx.tools.grep, { pattern: "foo(" });
      expect(errorOf(bad).code).to.equal("invalid_arguments");
      expect(bad.content).to.include("literal");
    });

    it("prints context lines and separates groups like grep", async () => {
      await mkdir(path.join(fx.repo, "ctx"), { recursive: true });
      const lines = Array.from({ length: 12 }, (_, i) =>
        i === 2 || i === 4 || i === 10 ? `hit ${i + 1}` : `line ${i + 1}`,
      );
      await writeFile(path.join(fx.repo, "ctx", "f.txt"), `${lines.join("\n")}\n`);
      const text = ok(await run(fx.tools.grep, { pattern: "^hit", path: "ctx", context: 1 }));
      expect(text.split("\n")).to.deep.equal([
        "ctx/f.txt-2-line 2",
        "ctx/f.txt:3:hit 3",
        "ctx/f.txt-4-line 4",
        "ctx/f.txt:5:hit 5",
        "ctx/f.txt-6-line 6",
        "--",
        "ctx/f.txt-10-line 10",
        "ctx/f.txt:11:hit 11",
        "ctx/f.txt-12-line 12",
      ]);
      const after = ok(await run(fx.tools.grep, { pattern: "^hit 11", path: "ctx", before: 0, after: 2 }));
      expect(after.split("\n")).to.deep.equal(["ctx/f.txt:11:hit 11", "ctx/f.txt-12-line 12"]);
    });

    it("has files_with_matches and count output modes", async () => {
      const files = await run(fx.tools.grep, { pattern: "alpha", outputMode: "files_with_matches", glob: "*.ts" });
      expect(ok(files).split("\n")).to.deep.equal(["src/a.ts", "src/nested/deep/b.ts"]);
      const count = ok(await run(fx.tools.grep, { pattern: "alpha", outputMode: "count", path: "src" }));
      expect(count).to.equal("src/a.ts:1\nsrc/nested/deep/b.ts:2\n\n3 matching lines in 2 files.");
      expect(errorOf(await run(fx.tools.grep, { pattern: "x", outputMode: "lines" })).code).to.equal(
        "invalid_arguments",
      );
    });

    it("gives the same lines as a whole-file reference for any chunk size, pattern and context", async () => {
      await mkdir(path.join(fx.repo, "prop"), { recursive: true });
      const file = path.join(fx.repo, "prop", "p.txt");
      const line = fc.constantFrom("alpha", "beta foo", "", "  foo", "gamma\r", "héllo wörld", "zzz", "foo");
      const pattern = fc.constantFrom("foo", "^foo", "foo$", "^$", "ö", "beta|gamma$", "^\\s+", "a{2}", "^z+$");
      await fc.assert(
        fc.asyncProperty(
          fc.array(line, { maxLength: 120 }),
          fc.boolean(),
          pattern,
          fc.nat(3),
          fc.nat(3),
          fc.constantFrom(16, 23, 64, 1024),
          async (lines, trailingNewline, pat, before, after, chunk) => {
            const text = lines.join("\n") + (trailingNewline && lines.length > 0 ? "\n" : "");
            await writeFile(file, text);
            const grep = createFsTools({ grepChunkBytes: chunk }).grep;
            const expected = referenceGrep(text, pat, before, after, "prop/p.txt");
            const res = ok(await run(grep, { pattern: pat, path: "prop/p.txt", before, after, limit: 2000 }));
            expect(res).to.equal(
              expected.length > 0 ? expected.join("\n") : `No matches for ${JSON.stringify(pat)} in prop/p.txt.`,
            );
            const count = ok(await run(grep, { pattern: pat, path: "prop/p.txt", outputMode: "count" }));
            const hits = expected.filter((l) => l.startsWith("prop/p.txt:")).length;
            expect(count.split("\n")[0]).to.equal(
              hits > 0 ? `prop/p.txt:${hits}` : `No matches for ${JSON.stringify(pat)} in prop/p.txt.`,
            );
          },
        ),
        { numRuns: 200 },
      );
    });

    it("keeps context lines right across skipped chunks of a big file", async () => {
      const res = ok(await run(fx.tools.grep, { pattern: "^row 00001312 ", path: "big.txt", context: 3 }));
      const want = [1309, 1310, 1311, 1312, 1313, 1314, 1315].map(
        (n) => `big.txt${n === 1312 ? ":" : "-"}${n}${n === 1312 ? ":" : "-"}${row(n).trimEnd()}`,
      );
      expect(res.split("\n")).to.deep.equal(want);
    });

    it("stops at the limit and caps output bytes with notes", async () => {
      const res = await run(fx.tools.grep, { pattern: "^row 0000000", path: "big.txt", limit: 3 });
      const text = ok(res);
      expect(text.split("\n\n")[0]?.split("\n")).to.have.length(3);
      expect(text).to.include("[Stopped at 3 matching lines; there are more.");
      expect(res.meta).to.include({ matches: 3, truncated: true });
      const files = ok(
        await run(fx.tools.grep, { pattern: "alpha", outputMode: "files_with_matches", glob: "*.ts", limit: 1 }),
      );
      expect(files).to.equal(
        "src/a.ts\n\n[Stopped at 1 file; there are more. Narrow path, glob or pattern, or raise limit.]",
      );
      const small = createFsTools({ grepMaxBytes: 300 });
      const capped = ok(await run(small.grep, { pattern: "^row", path: "big.txt", limit: 1000 }));
      expect(Buffer.byteLength(capped.split("\n\n")[0] ?? "")).to.be.at.most(300);
      expect(capped).to.include("[Output capped at 300 B");
    });

    it("streams a 50 MiB file to a match on its last line", async () => {
      const res = await run(fx.tools.grep, { pattern: "needle-at-the-end", path: ".", glob: "big.txt" });
      expect(ok(res)).to.equal(`big.txt:${BIG_ROWS}:${row(BIG_ROWS).trimEnd()}`);
    });

    it("keeps huge lines bounded and skips files over the size cap with a note", async () => {
      const res = ok(await run(fx.tools.grep, { pattern: "^a{10}", path: "oneline.min.js" }));
      expect(res.length).to.be.below(2_000);
      expect(res).to.include("[line truncated, 3.0 MiB]");
      const short = createFsTools({ grepMaxLineBytes: 1024 });
      expect(ok(await run(short.grep, { pattern: "needle-far-away", path: "oneline.min.js" }))).to.include(
        "No matches",
      );
      const tiny = createFsTools({ grepMaxFileBytes: 1024 * 1024 });
      const skipped = await run(tiny.grep, { pattern: "needle", glob: "*.{txt,js}" });
      expect(ok(skipped)).to.include("Skipped 2 files over 1.0 MiB: big.txt, oneline.min.js");
    });

    it("decodes invalid UTF-8, searches a single file, and refuses special files", async () => {
      expect(ok(await run(fx.tools.grep, { pattern: "na.ve", path: "latin1.txt" }))).to.equal(
        "latin1.txt:2:na\uFFFDve",
      );
      expect(ok(await run(fx.tools.grep, { pattern: "two$", path: "crlf.txt" }))).to.equal("crlf.txt:2:two");
      expect(errorOf(await run(fx.tools.grep, { pattern: "x", path: "pipe" })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(fx.tools.grep, { pattern: "x", path: "missing-dir" })).code).to.equal("not_found");
      expect(errorOf(await run(fx.tools.grep, { pattern: "x", glob: "../*" })).code).to.equal("invalid_arguments");
    });

    it("returns aborted when the turn is aborted", async () => {
      const ac = new AbortController();
      ac.abort();
      expect(errorOf(await run(fx.tools.grep, { pattern: "x" }, ctxFor(fx.repo, { signal: ac.signal }))).code).to.equal(
        "aborted",
      );
    });
  });
});
