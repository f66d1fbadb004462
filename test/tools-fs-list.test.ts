import { mkdir, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import picomatch from "picomatch";
import { compileGlob } from "../plugins/tools-fs/glob.js";
import { createFsTools } from "../plugins/tools-fs/index.js";
import { ctxFor, errorOf, ok, toolsFsFixture } from "./support/tools-fs.js";

describe("tools-fs", function () {
  this.timeout(60_000);
  const { fx, run } = toolsFsFixture();

  describe("ls", () => {
    it("lists directories first, then files with sizes and links with targets, hiding .git", async () => {
      const text = ok(await run(fx.tools.ls, {}));
      const lines = text.split("\n");
      expect(lines[0]).to.match(/^\.\/ \(\d+ directories, \d+ files\)$/);
      expect(lines.indexOf("src/")).to.be.below(lines.findIndex((l) => l.startsWith("README.md")));
      expect(text)
        .to.include("README.md  (29 B)")
        .and.include("link-in.ts -> src/a.ts")
        .and.include("pipe (special file)");
      expect(text).to.include("ignored/").and.not.include(".git/");
      expect(lines).to.include(".gitignore  (25 B)");
    });

    it("caps entries with a note and refuses files and missing paths", async () => {
      expect(ok(await run(fx.tools.ls, { limit: 2 }))).to.match(/\[Showing 2 of \d+ entries/);
      expect(ok(await run(fx.tools.ls, { path: "src/nested/deep" }))).to.include("b.ts  (");
      expect(errorOf(await run(fx.tools.ls, { path: "README.md" })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(fx.tools.ls, { path: "nope" })).code).to.equal("not_found");
    });
  });

  describe("glob", () => {
    it("matches a path exactly as picomatch's own matcher does (the filter tests the same regular expression)", () => {
      const patterns = ["*.ts", "**/*.d.ts", "src/**/*.ts", "*.{json,yaml}", "a[b].ts", "**/a[b].ts", "!(*.js)"];
      patterns.push("*.+(ts|js)", "src/*", "**", "*", "x/**/y/*.md", ".hidden", "**/.git*", "?.ts", "[!a]*.ts");
      patterns.push("\\*.ts", "**/foo/**", "./src/*.ts", "@(a|b).ts", "{a,b}/**/c.ts", "src/[a-c]/*.ts");
      const paths = ["a.ts", "src/a.ts", "src/x/b.d.ts", "b.d.ts", "c/d.yaml", "a[b].ts", "x/a[b].ts", "x.js"];
      paths.push("src/q/r", "x/y/z.md", "x/k/y/z.md", ".hidden", "d/.hidden", "p/.github", "*.ts", "x/foo/y");
      paths.push("a/z/c.ts", "b/c.ts", "src/b/x.ts", "src/d/x.ts", "a.ts/", "", "/", "\u00e9/\uFFFD.ts");
      for (const pattern of patterns) {
        const clean = pattern.replace(/^\.\//, "");
        const reference = picomatch(clean, { dot: true, basename: !clean.includes("/") });
        const mine = compileGlob(pattern);
        for (const rel of paths) expect(mine(rel), `${pattern} on "${rel}"`).to.equal(reference(rel));
      }
    });

    it("finds files at any depth, respects .gitignore and skips .git and symbolic links", async () => {
      const text = ok(await run(fx.tools.glob, { pattern: "*.ts" }));
      expect(text.split("\n")).to.include.members(["src/a.ts", "src/nested/deep/b.ts"]).and.not.include("link-in.ts");
      expect(
        ok(await run(fx.tools.glob, { pattern: "src/**/*.ts" }))
          .split("\n")
          .sort(),
      ).to.deep.equal(["src/a.ts", "src/nested/deep/b.ts"]);
      const logs = ok(await run(fx.tools.glob, { pattern: "*.log" }));
      expect(logs).to.equal("keep.log");
      expect(ok(await run(fx.tools.glob, { pattern: "**/*" })))
        .to.not.include("ignored/")
        .and.not.include(".git/");
    });

    it("sorts newest first (name breaks ties) and caps with a note", async () => {
      await mkdir(path.join(fx.repo, "dated"), { recursive: true });
      for (const [name, secs] of [
        ["old.md", 1_000],
        ["new.md", 3_000],
        ["mid.md", 2_000],
        ["also-mid.md", 2_000],
      ] as const) {
        await writeFile(path.join(fx.repo, "dated", name), name);
        await utimes(path.join(fx.repo, "dated", name), secs, secs);
      }
      const text = ok(await run(fx.tools.glob, { pattern: "*.md", path: "dated" }));
      expect(text.split("\n")).to.deep.equal(["dated/new.md", "dated/also-mid.md", "dated/mid.md", "dated/old.md"]);
      const capped = ok(await run(fx.tools.glob, { pattern: "dated/*.md", limit: 1 }));
      expect(capped).to.match(/^dated\/new\.md\n\n\[Showing the 1 newest of 4 matches/);
    });

    it("searches an ignored directory when asked for it explicitly", async () => {
      expect(ok(await run(fx.tools.glob, { pattern: "*.txt", path: "ignored" }))).to.equal("ignored/hidden.txt");
    });

    it("applies .gitignore files outside a git repository too", async () => {
      const plain = path.join(fx.tmp, "plain");
      await mkdir(path.join(plain, "build"), { recursive: true });
      await mkdir(path.join(plain, "sub"), { recursive: true });
      await writeFile(path.join(plain, ".gitignore"), "build/\n");
      await writeFile(path.join(plain, "sub", ".gitignore"), "*.tmp\n!keep.tmp\n");
      for (const f of ["a.txt", "build/out.txt", "sub/x.tmp", "sub/keep.tmp", "sub/b.txt"])
        await writeFile(path.join(plain, f), f);
      const res = await run(fx.tools.glob, { pattern: "**/*.{txt,tmp}" }, ctxFor(plain));
      expect(ok(res).split("\n").sort()).to.deep.equal(["a.txt", "sub/b.txt", "sub/keep.tmp"]);
      expect(res.meta).to.include({ engine: "ripgrep" });
      const js = await createFsTools({}, "javascript").glob.execute({ pattern: "**/*.{txt,tmp}" }, ctxFor(plain));
      expect(js.content).to.equal(res.content);
      expect(js.meta).to.include({ engine: "javascript" });
    });

    it("reports no match, refuses escaping patterns and file paths", async () => {
      expect(ok(await run(fx.tools.glob, { pattern: "*.nothing" }))).to.include('No files match "*.nothing"');
      expect(errorOf(await run(fx.tools.glob, { pattern: "../*" })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(fx.tools.glob, { pattern: "/etc/*" })).code).to.equal("invalid_arguments");
      expect(errorOf(await run(fx.tools.glob, { pattern: "*", path: "README.md" })).code).to.equal("invalid_arguments");
    });
  });
});
