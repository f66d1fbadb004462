import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { ctxFor, errorOf, ok, toolsFsFixture } from "./support/tools-fs.js";

describe("tools-fs", function () {
  this.timeout(60_000);
  const { fx, run } = toolsFsFixture();

  describe("write", () => {
    it("creates parent directories and reports a new file", async () => {
      const res = await run(fx.tools.write, { path: "out/new/dir/file.txt", content: "hello\nworld\n" });
      expect(ok(res))
        .to.include("Created out/new/dir/file.txt")
        .and.include("2 lines")
        .and.include("Created directory out");
      expect(res.meta).to.include({ created: true, changed: true });
      expect(await readFile(path.join(fx.repo, "out/new/dir/file.txt"), "utf8")).to.equal("hello\nworld\n");
    });

    it("reports an overwrite, and an identical write as unchanged", async () => {
      await run(fx.tools.write, { path: "out/over.txt", content: "first" });
      const res = await run(fx.tools.write, { path: "out/over.txt", content: "second!" });
      expect(ok(res)).to.include("Overwrote out/over.txt").and.include("previously 5 bytes");
      expect(res.meta).to.include({ created: false, changed: true });
      const same = await run(fx.tools.write, { path: "out/over.txt", content: "second!" });
      expect(same.meta).to.include({ created: false, changed: false });
      expect(await readFile(path.join(fx.repo, "out/over.txt"), "utf8")).to.equal("second!");
    });

    it("refuses directories, special files and a file used as a directory", async () => {
      expect(errorOf(await run(fx.tools.write, { path: "src", content: "x" })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(fx.tools.write, { path: "pipe", content: "x" })).code).to.equal("invalid_arguments");
      const res = await run(fx.tools.write, { path: "src/a.ts/child.txt", content: "x" });
      expect(errorOf(res).code).to.equal("not_found");
      expect(res.content).to.include("src/a.ts/child.txt");
    });

    it("in plan mode writes only inside the plans directory, creating it on demand", async () => {
      const planCtx = ctxFor(fx.repo, {
        mode: "plan",
        sessionId: "p1",
        plansDir: path.join(fx.repo, ".agentd/plans/p1"),
      });
      const denied = await run(fx.tools.write, { path: "src/plan-mode.ts", content: "x" }, planCtx);
      expect(errorOf(denied).code).to.equal("permission_denied");
      expect(denied.content).to.include("plan mode").and.include("src/plan-mode.ts");
      expect(denied.error?.suggestedFix).to.include(".agentd/plans/p1");
      const dirItself = await run(fx.tools.write, { path: ".agentd/plans/p1", content: "x" }, planCtx);
      expect(errorOf(dirItself).code).to.equal("permission_denied");
      ok(await run(fx.tools.write, { path: ".agentd/plans/p1/plan.md", content: "# Plan\n" }, planCtx));
      expect(await readFile(path.join(fx.repo, ".agentd/plans/p1/plan.md"), "utf8")).to.equal("# Plan\n");
      await stat(path.join(fx.repo, "src/plan-mode.ts")).then(
        () => expect.fail("written in plan mode"),
        (err: NodeJS.ErrnoException) => expect(err.code).to.equal("ENOENT"),
      );
      expect(ok(await run(fx.tools.read, { path: "src/a.ts" }, planCtx))).to.include("alpha");
      expect(ok(await run(fx.tools.grep, { pattern: "alpha", outputMode: "count" }, planCtx))).to.include("src/a.ts:1");
    });
  });

  describe("edit", () => {
    const file = "edit/target.ts";
    beforeEach(async () => {
      await mkdir(path.join(fx.repo, "edit"), { recursive: true });
      await writeFile(path.join(fx.repo, file), "const a = 1;\nfoo();\nfoo();\nfoo();\nconst b = 2;\n");
    });
    const content = () => readFile(path.join(fx.repo, file), "utf8");

    it("replaces a unique exact match and shows the result with line numbers", async () => {
      const res = await run(fx.tools.edit, { filePath: file, oldString: "const b = 2;", newString: "const b = 3;" });
      expect(ok(res)).to.include("replaced 1 occurrence").and.include("     5\tconst b = 3;");
      expect(await content()).to.equal("const a = 1;\nfoo();\nfoo();\nfoo();\nconst b = 3;\n");
    });

    it("refuses an ambiguous match, saying how many and where, and leaves the file alone", async () => {
      const res = await run(fx.tools.edit, { filePath: file, oldString: "foo();", newString: "bar();" });
      expect(errorOf(res).code).to.equal("conflict");
      expect(res.content).to.include("matches 3 places").and.include("lines 2, 3, 4");
      expect(res.error?.suggestedFix).to.include("replaceAll");
      expect(await content()).to.include("foo();\nfoo();\nfoo();");
    });

    it("replaces every occurrence with replaceAll", async () => {
      const res = await run(fx.tools.edit, {
        filePath: file,
        oldString: "foo();",
        newString: "bar();",
        replaceAll: true,
      });
      expect(ok(res)).to.include("replaced 3 occurrences");
      expect(await content()).to.equal("const a = 1;\nbar();\nbar();\nbar();\nconst b = 2;\n");
    });

    it("reports an absent match with similar lines, and refuses identical strings", async () => {
      const res = await run(fx.tools.edit, { filePath: file, oldString: "const  b = 2;", newString: "x" });
      expect(errorOf(res).code).to.equal("not_found");
      expect(res.content).to.include("was not found in edit/target.ts").and.include("     5\tconst b = 2;");
      const same = await run(fx.tools.edit, { filePath: file, oldString: "foo();", newString: "foo();" });
      expect(errorOf(same).code).to.equal("invalid_arguments");
      expect(same.content).to.include("identical");
    });

    it("creates a file from an empty oldString, but never overwrites a non-empty one that way", async () => {
      ok(await run(fx.tools.edit, { filePath: "edit/new/fresh.ts", oldString: "", newString: "fresh\n" }));
      expect(await readFile(path.join(fx.repo, "edit/new/fresh.ts"), "utf8")).to.equal("fresh\n");
      expect(errorOf(await run(fx.tools.edit, { filePath: file, oldString: "", newString: "x" })).code).to.equal(
        "invalid_arguments",
      );
      expect(
        errorOf(await run(fx.tools.edit, { filePath: "edit/missing.ts", oldString: "a", newString: "b" })).code,
      ).to.equal("not_found");
    });

    it("keeps CRLF line endings when the model sends LF", async () => {
      await writeFile(path.join(fx.repo, "edit/crlf.txt"), "one\r\ntwo\r\nthree\r\n");
      ok(await run(fx.tools.edit, { filePath: "edit/crlf.txt", oldString: "one\ntwo", newString: "uno\ndos" }));
      expect(await readFile(path.join(fx.repo, "edit/crlf.txt"), "utf8")).to.equal("uno\r\ndos\r\nthree\r\n");
    });

    it("keeps invalid UTF-8 bytes elsewhere in the file intact", async () => {
      const bytes = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6c, 0x64, 0x0a]);
      await writeFile(path.join(fx.repo, "edit/latin1.txt"), bytes);
      ok(await run(fx.tools.edit, { filePath: "edit/latin1.txt", oldString: "old", newString: "new ✓" }));
      const after = await readFile(path.join(fx.repo, "edit/latin1.txt"));
      expect(after.equals(Buffer.concat([bytes.subarray(0, 5), Buffer.from("new ✓\n")]))).to.equal(true);
    });

    it("refuses binary, special, oversized and directory targets", async () => {
      expect(
        errorOf(await run(fx.tools.edit, { filePath: "blob.bin", oldString: "needle", newString: "x" })).code,
      ).to.equal("invalid_arguments");
      expect(errorOf(await run(fx.tools.edit, { filePath: "pipe", oldString: "a", newString: "b" })).code).to.equal(
        "invalid_arguments",
      );
      expect(errorOf(await run(fx.tools.edit, { filePath: "src", oldString: "a", newString: "b" })).code).to.equal(
        "invalid_arguments",
      );
      const big = await run(fx.tools.edit, { filePath: "big.txt", oldString: "row 00000001", newString: "x" });
      expect(errorOf(big).code).to.equal("too_large");
      expect(big.content).to.include("50 MiB");
    });

    it("in plan mode edits only inside the plans directory", async () => {
      const planCtx = ctxFor(fx.repo, {
        mode: "plan",
        sessionId: "p2",
        plansDir: path.join(fx.repo, ".agentd/plans/p2"),
      });
      const denied = await run(fx.tools.edit, { filePath: file, oldString: "const a = 1;", newString: "x" }, planCtx);
      expect(errorOf(denied).code).to.equal("permission_denied");
      expect(await content()).to.include("const a = 1;");
      ok(
        await run(
          fx.tools.edit,
          { filePath: ".agentd/plans/p2/plan.md", oldString: "", newString: "- [ ] a\n" },
          planCtx,
        ),
      );
      ok(
        await run(
          fx.tools.edit,
          { filePath: ".agentd/plans/p2/plan.md", oldString: "- [ ] a", newString: "- [x] a" },
          planCtx,
        ),
      );
      expect(await readFile(path.join(fx.repo, ".agentd/plans/p2/plan.md"), "utf8")).to.equal("- [x] a\n");
    });
  });
});
