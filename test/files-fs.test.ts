import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { filesFixture, PNG } from "./support/files.js";

describe("files plugin: session files, attachments, browsing, images", function () {
  this.timeout(20000);
  const { fx, getBytes } = filesFixture();

  describe("GET /sessions/{id}/fs", () => {
    it("lists one directory: directories first, .git hidden, sizes for files", async () => {
      const res = await fx.d.get(`/sessions/${fx.id}/fs`);
      expect(res.status).to.equal(200);
      expect(res.body.path).to.equal(".");
      expect(res.body.truncated).to.equal(false);
      expect(res.body.entries).to.deep.equal([
        { name: "src", type: "dir" },
        { name: "README.md", type: "file", size: 8 },
      ]);
      const sub = await fx.d.get(`/sessions/${fx.id}/fs?path=src`);
      expect(sub.body.path).to.equal("src");
      expect(sub.body.entries.map((e: { name: string }) => e.name)).to.deep.equal(["deep", "main.ts"]);
      const abs = await fx.d.get(`/sessions/${fx.id}/fs?path=${encodeURIComponent(join(fx.cwd, "src", "deep"))}`);
      expect(abs.body.path).to.equal("src/deep");
    });

    it("answers 400 for files, '..' and outside paths, 404 for missing paths and sessions", async () => {
      expect((await fx.d.get(`/sessions/${fx.id}/fs?path=README.md`)).status).to.equal(400);
      const dotdot = await fx.d.get(`/sessions/${fx.id}/fs?path=src/../..`);
      expect(dotdot.status).to.equal(400);
      expect(dotdot.body.error).to.match(/\.\./);
      expect((await fx.d.get(`/sessions/${fx.id}/fs?path=${encodeURIComponent(fx.outside)}`)).status).to.equal(400);
      const missing = await fx.d.get(`/sessions/${fx.id}/fs?path=nope`);
      expect(missing.status).to.equal(404);
      expect(missing.body.error).to.be.a("string");
      expect((await fx.d.get("/sessions/unknown-session/fs")).status).to.equal(404);
    });

    it("never follows a symbolic link out of the session directory", async () => {
      symlinkSync(fx.outside, join(fx.cwd, "escape"));
      symlinkSync(join(fx.outside, "secret.txt"), join(fx.cwd, "secret-link"));
      symlinkSync(join(fx.cwd, "src"), join(fx.cwd, "inner"));
      const list = await fx.d.get(`/sessions/${fx.id}/fs`);
      const byName = Object.fromEntries(list.body.entries.map((e: { name: string }) => [e.name, e]));
      expect(byName.escape).to.deep.equal({ name: "escape", type: "symlink", symlink: true });
      expect(byName["secret-link"]).to.deep.equal({ name: "secret-link", type: "symlink", symlink: true });
      expect(byName.inner).to.deep.equal({ name: "inner", type: "dir", symlink: true });
      expect((await fx.d.get(`/sessions/${fx.id}/fs?path=escape`)).status).to.equal(400);
      expect((await fx.d.get(`/sessions/${fx.id}/fs?path=inner`)).body.path).to.equal("src");
      expect((await getBytes(`/sessions/${fx.id}/fs/download?path=escape/secret.txt`)).status).to.equal(400);
      const viaLink = await getBytes(`/sessions/${fx.id}/fs/download?path=secret-link`);
      expect(viaLink.status).to.equal(400);
      expect(viaLink.bytes.toString()).to.not.contain("top secret");
      const rename = await fx.d.post(`/sessions/${fx.id}/fs/rename`, { path: "escape/secret.txt", name: "mine.txt" });
      expect(rename.status).to.equal(400);
      expect((await fx.d.delete(`/sessions/${fx.id}/fs?path=escape/secret.txt`)).status).to.equal(400);
      expect(readFileSync(join(fx.outside, "secret.txt"), "utf8")).to.equal("top secret");
    });

    it("answers an empty listing when the working directory is gone", async () => {
      rmSync(fx.cwd, { recursive: true, force: true });
      const res = await fx.d.get(`/sessions/${fx.id}/fs`);
      expect(res.body).to.deep.equal({ path: ".", entries: [], truncated: false });
      expect((await fx.d.delete(`/sessions/${fx.id}/fs?path=x`)).status).to.equal(404);
    });
  });

  describe("DELETE /sessions/{id}/fs", () => {
    it("deletes files and directories (recursively)", async () => {
      expect((await fx.d.delete(`/sessions/${fx.id}/fs?path=README.md`)).body).to.deep.equal({ ok: true });
      expect(existsSync(join(fx.cwd, "README.md"))).to.equal(false);
      expect((await fx.d.delete(`/sessions/${fx.id}/fs?path=src`)).body).to.deep.equal({ ok: true });
      expect(existsSync(join(fx.cwd, "src"))).to.equal(false);
    });

    it("removes a symbolic link itself, never its target", async () => {
      symlinkSync(fx.outside, join(fx.cwd, "escape"));
      expect((await fx.d.delete(`/sessions/${fx.id}/fs?path=escape`)).status).to.equal(200);
      expect(existsSync(join(fx.cwd, "escape"))).to.equal(false);
      expect(readFileSync(join(fx.outside, "secret.txt"), "utf8")).to.equal("top secret");
    });

    it("refuses the root, '..' and missing paths", async () => {
      for (const p of [".", "", "src/.."]) {
        const res = await fx.d.delete(`/sessions/${fx.id}/fs?path=${encodeURIComponent(p)}`);
        expect(res.status, p).to.equal(400);
      }
      expect((await fx.d.delete(`/sessions/${fx.id}/fs`)).status).to.equal(400);
      expect((await fx.d.delete(`/sessions/${fx.id}/fs?path=nope.txt`)).status).to.equal(404);
      expect(existsSync(join(fx.cwd, "README.md"))).to.equal(true);
    });
  });

  describe("GET /sessions/{id}/fs/search", () => {
    it("finds names case-insensitively, skips .git and .gitignore'd entries", async () => {
      writeFileSync(join(fx.cwd, ".gitignore"), "build/\n*.log\n!keep.log\n");
      mkdirSync(join(fx.cwd, "build"));
      writeFileSync(join(fx.cwd, "build", "needle-built.js"), "");
      writeFileSync(join(fx.cwd, "needle.log"), "");
      writeFileSync(join(fx.cwd, "keep.log"), "");
      writeFileSync(join(fx.cwd, ".git", "needle"), "");
      mkdirSync(join(fx.cwd, "src", "sub"));
      writeFileSync(join(fx.cwd, "src", "sub", ".gitignore"), "NEEDLE-local.md\n");
      writeFileSync(join(fx.cwd, "src", "sub", "NEEDLE-local.md"), "");
      writeFileSync(join(fx.cwd, "src", "sub", "Needle-2.md"), "");
      const res = await fx.d.get(`/sessions/${fx.id}/fs/search?q=NEEDLE`);
      expect(res.status).to.equal(200);
      expect(res.body.truncated).to.equal(false);
      expect(res.body.results).to.deep.equal([
        { path: "src/deep/needle.txt", type: "file" },
        { path: "src/sub/Needle-2.md", type: "file" },
      ]);
      const logs = await fx.d.get(`/sessions/${fx.id}/fs/search?q=.log`);
      expect(logs.body.results.map((r: { path: string }) => r.path)).to.deep.equal(["keep.log"]);
      const byPath = await fx.d.get(`/sessions/${fx.id}/fs/search?q=${encodeURIComponent("deep/need")}`);
      expect(byPath.body.results.map((r: { path: string }) => r.path)).to.deep.equal(["src/deep/needle.txt"]);
    });

    it("applies the .gitignore of the repository above a session in a subdirectory", async () => {
      writeFileSync(join(fx.cwd, ".gitignore"), "src/deep/\n");
      const sub = await fx.d.createSession({ cwd: join(fx.cwd, "src") });
      const res = await fx.d.get(`/sessions/${sub}/fs/search?q=needle`);
      expect(res.body.results).to.deep.equal([]);
      const main = await fx.d.get(`/sessions/${sub}/fs/search?q=main`);
      expect(main.body.results).to.deep.equal([{ path: "main.ts", type: "file" }]);
    });

    it("is bounded by limit and says so; a blank query finds nothing", async () => {
      for (let i = 0; i < 5; i++) writeFileSync(join(fx.cwd, `match-${i}.txt`), "");
      const res = await fx.d.get(`/sessions/${fx.id}/fs/search?q=match&limit=3`);
      expect(res.body.results).to.have.length(3);
      expect(res.body.truncated).to.equal(true);
      expect((await fx.d.get(`/sessions/${fx.id}/fs/search?q=%20`)).body).to.deep.equal({
        results: [],
        truncated: false,
      });
      expect((await fx.d.get(`/sessions/${fx.id}/fs/search?q=x&limit=0`)).status).to.equal(400);
      expect((await fx.d.get("/sessions/nope/fs/search?q=x")).status).to.equal(404);
    });
  });

  describe("GET /sessions/{id}/fs/download", () => {
    it("sends the bytes as an attachment with an exact file name", async () => {
      const name = 'résumé "v1".txt';
      writeFileSync(join(fx.cwd, name), "bytes\u0000here");
      const res = await getBytes(`/sessions/${fx.id}/fs/download?path=${encodeURIComponent(name)}`);
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.equal("application/octet-stream");
      expect(res.bytes.toString()).to.equal("bytes\u0000here");
      const cd = res.headers.get("content-disposition") ?? "";
      expect(cd).to.match(/^attachment; filename="r_sum_ _v1_.txt"; filename\*=UTF-8''/);
      expect(decodeURIComponent(cd.split("''")[1] ?? "")).to.equal(name);
      expect(res.headers.get("x-content-type-options")).to.equal("nosniff");
    });

    it("streams a large file completely", async () => {
      const big = Buffer.alloc(5 * 1024 * 1024 + 123, 7);
      big[big.length - 1] = 42;
      writeFileSync(join(fx.cwd, "big.bin"), big);
      const res = await getBytes(`/sessions/${fx.id}/fs/download?path=big.bin`);
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-length")).to.equal(String(big.length));
      expect(res.bytes.equals(big)).to.equal(true);
    });

    it("serves raster images inline on request, never SVG", async () => {
      writeFileSync(join(fx.cwd, "pic.png"), PNG);
      writeFileSync(join(fx.cwd, "pic.svg"), "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>");
      const png = await getBytes(`/sessions/${fx.id}/fs/download?path=pic.png&inline=1`);
      expect(png.headers.get("content-type")).to.equal("image/png");
      expect(png.headers.get("content-disposition")).to.match(/^inline;/);
      const svg = await getBytes(`/sessions/${fx.id}/fs/download?path=pic.svg&inline=1`);
      expect(svg.headers.get("content-type")).to.equal("application/octet-stream");
      expect(svg.headers.get("content-disposition")).to.match(/^attachment;/);
    });

    it("answers 400 for directories and 404 for missing files", async () => {
      expect((await getBytes(`/sessions/${fx.id}/fs/download?path=src`)).status).to.equal(400);
      expect((await getBytes(`/sessions/${fx.id}/fs/download?path=.`)).status).to.equal(400);
      expect((await getBytes(`/sessions/${fx.id}/fs/download?path=nope`)).status).to.equal(404);
      expect((await getBytes(`/sessions/${fx.id}/fs/download`)).status).to.equal(400);
    });
  });

  describe("POST /sessions/{id}/fs/rename", () => {
    it("renames in place ({path, name}) and moves ({from, to})", async () => {
      const res = await fx.d.post(`/sessions/${fx.id}/fs/rename`, { path: "README.md", name: "README.txt" });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ ok: true, from: "README.md", path: "README.txt" });
      expect(readFileSync(join(fx.cwd, "README.txt"), "utf8")).to.equal("# hello\n");
      const moved = await fx.d.post(`/sessions/${fx.id}/fs/rename`, { from: "README.txt", to: "src/deep/README.txt" });
      expect(moved.body.path).to.equal("src/deep/README.txt");
      expect(existsSync(join(fx.cwd, "src", "deep", "README.txt"))).to.equal(true);
    });

    it("never overwrites: an existing destination is a 409 and both files stay", async () => {
      writeFileSync(join(fx.cwd, "other.md"), "other");
      const res = await fx.d.post(`/sessions/${fx.id}/fs/rename`, { path: "README.md", name: "other.md" });
      expect(res.status).to.equal(409);
      expect(res.body.error).to.match(/exists/);
      expect(readFileSync(join(fx.cwd, "other.md"), "utf8")).to.equal("other");
      expect(readFileSync(join(fx.cwd, "README.md"), "utf8")).to.equal("# hello\n");
    });

    it("refuses bad names, bad shapes, moves into itself and missing sources", async () => {
      const bad = [
        { path: "README.md", name: "a/b" },
        { path: "README.md", name: ".." },
        { path: "README.md", to: "../x" },
        { path: "README.md", name: "x", to: "y" },
        { path: "README.md" },
        { name: "x" },
        { path: "src", to: "src/deep/src" },
        { path: ".", name: "x" },
      ];
      for (const body of bad) {
        const res = await fx.d.post(`/sessions/${fx.id}/fs/rename`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error).to.be.a("string");
      }
      expect((await fx.d.post(`/sessions/${fx.id}/fs/rename`, { path: "nope", name: "x" })).status).to.equal(404);
      expect((await fx.d.post(`/sessions/${fx.id}/fs/rename`, { path: "README.md", to: "nodir/x" })).status).to.equal(
        404,
      );
      expect((await fx.d.post(`/sessions/${fx.id}/fs/rename`, { path: "README.md", to: 3 })).status).to.equal(400);
    });
  });
});
