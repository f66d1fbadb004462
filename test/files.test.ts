import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileErrors, validate } from "@readme/openapi-parser";
import { expect } from "chai";
import { SessionStoreToken } from "../core/store.js";
import { builtinSource } from "../host/plugin-sources.js";
import files, { candidateName, executableFormat, sanitizeName } from "../plugins/files/index.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";

const MAX_UPLOAD = 64 * 1024;
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

function tempDir(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

function dataUrl(bytes: Buffer | string, mime = "text/plain"): string {
  return `data:${mime};base64,${Buffer.from(bytes).toString("base64")}`;
}

describe("files plugin: session files, attachments, browsing, images", function () {
  this.timeout(20000);
  let d: TestDaemon;
  let browseRoot: string;
  let outside: string;
  let cwd: string;
  let id: string;

  before(async () => {
    browseRoot = tempDir("agentd-browse-");
    outside = tempDir("agentd-outside-");
    writeFileSync(join(outside, "secret.txt"), "top secret");
    const withFiles = builtinPlugins.some((p) => p.manifest.id === "files")
      ? builtinPlugins
      : [...builtinPlugins, files];
    d = await startTestDaemon({
      builtins: withFiles.map(builtinSource),
      env: { AGENTD_MODEL: "test-model" },
      config: {
        pluginOptions: { files: { browseRoots: [browseRoot], browseAnywhere: false, maxUploadBytes: MAX_UPLOAD } },
      },
    });
  });
  after(async () => {
    await d.cleanup();
    rmSync(browseRoot, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  beforeEach(async () => {
    cwd = tempDir("agentd-files-");
    mkdirSync(join(cwd, "src", "deep"), { recursive: true });
    mkdirSync(join(cwd, ".git"));
    writeFileSync(join(cwd, "README.md"), "# hello\n");
    writeFileSync(join(cwd, "src", "main.ts"), "export {};\n");
    writeFileSync(join(cwd, "src", "deep", "needle.txt"), "x");
    id = await d.createSession({ cwd });
  });
  afterEach(() => rmSync(cwd, { recursive: true, force: true }));

  async function getBytes(path: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
    const res = await fetch(`${d.api}${path}`, { headers: { authorization: `Bearer ${d.token}` } });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  describe("GET /sessions/{id}/fs", () => {
    it("lists one directory: directories first, .git hidden, sizes for files", async () => {
      const res = await d.get(`/sessions/${id}/fs`);
      expect(res.status).to.equal(200);
      expect(res.body.path).to.equal(".");
      expect(res.body.truncated).to.equal(false);
      expect(res.body.entries).to.deep.equal([
        { name: "src", type: "dir" },
        { name: "README.md", type: "file", size: 8 },
      ]);
      const sub = await d.get(`/sessions/${id}/fs?path=src`);
      expect(sub.body.path).to.equal("src");
      expect(sub.body.entries.map((e: { name: string }) => e.name)).to.deep.equal(["deep", "main.ts"]);
      const abs = await d.get(`/sessions/${id}/fs?path=${encodeURIComponent(join(cwd, "src", "deep"))}`);
      expect(abs.body.path).to.equal("src/deep");
    });

    it("answers 400 for files, '..' and outside paths, 404 for missing paths and sessions", async () => {
      expect((await d.get(`/sessions/${id}/fs?path=README.md`)).status).to.equal(400);
      const dotdot = await d.get(`/sessions/${id}/fs?path=src/../..`);
      expect(dotdot.status).to.equal(400);
      expect(dotdot.body.error).to.match(/\.\./);
      expect((await d.get(`/sessions/${id}/fs?path=${encodeURIComponent(outside)}`)).status).to.equal(400);
      const missing = await d.get(`/sessions/${id}/fs?path=nope`);
      expect(missing.status).to.equal(404);
      expect(missing.body.error).to.be.a("string");
      expect((await d.get("/sessions/unknown-session/fs")).status).to.equal(404);
    });

    it("never follows a symbolic link out of the session directory", async () => {
      symlinkSync(outside, join(cwd, "escape"));
      symlinkSync(join(outside, "secret.txt"), join(cwd, "secret-link"));
      symlinkSync(join(cwd, "src"), join(cwd, "inner"));
      const list = await d.get(`/sessions/${id}/fs`);
      const byName = Object.fromEntries(list.body.entries.map((e: { name: string }) => [e.name, e]));
      expect(byName.escape).to.deep.equal({ name: "escape", type: "symlink", symlink: true });
      expect(byName["secret-link"]).to.deep.equal({ name: "secret-link", type: "symlink", symlink: true });
      expect(byName.inner).to.deep.equal({ name: "inner", type: "dir", symlink: true });
      expect((await d.get(`/sessions/${id}/fs?path=escape`)).status).to.equal(400);
      expect((await d.get(`/sessions/${id}/fs?path=inner`)).body.path).to.equal("src");
      expect((await getBytes(`/sessions/${id}/fs/download?path=escape/secret.txt`)).status).to.equal(400);
      const viaLink = await getBytes(`/sessions/${id}/fs/download?path=secret-link`);
      expect(viaLink.status).to.equal(400);
      expect(viaLink.bytes.toString()).to.not.contain("top secret");
      const rename = await d.post(`/sessions/${id}/fs/rename`, { path: "escape/secret.txt", name: "mine.txt" });
      expect(rename.status).to.equal(400);
      expect((await d.delete(`/sessions/${id}/fs?path=escape/secret.txt`)).status).to.equal(400);
      expect(readFileSync(join(outside, "secret.txt"), "utf8")).to.equal("top secret");
    });

    it("answers an empty listing when the working directory is gone", async () => {
      rmSync(cwd, { recursive: true, force: true });
      const res = await d.get(`/sessions/${id}/fs`);
      expect(res.body).to.deep.equal({ path: ".", entries: [], truncated: false });
      expect((await d.delete(`/sessions/${id}/fs?path=x`)).status).to.equal(404);
    });
  });

  describe("DELETE /sessions/{id}/fs", () => {
    it("deletes files and directories (recursively)", async () => {
      expect((await d.delete(`/sessions/${id}/fs?path=README.md`)).body).to.deep.equal({ ok: true });
      expect(existsSync(join(cwd, "README.md"))).to.equal(false);
      expect((await d.delete(`/sessions/${id}/fs?path=src`)).body).to.deep.equal({ ok: true });
      expect(existsSync(join(cwd, "src"))).to.equal(false);
    });

    it("removes a symbolic link itself, never its target", async () => {
      symlinkSync(outside, join(cwd, "escape"));
      expect((await d.delete(`/sessions/${id}/fs?path=escape`)).status).to.equal(200);
      expect(existsSync(join(cwd, "escape"))).to.equal(false);
      expect(readFileSync(join(outside, "secret.txt"), "utf8")).to.equal("top secret");
    });

    it("refuses the root, '..' and missing paths", async () => {
      for (const p of [".", "", "src/.."]) {
        const res = await d.delete(`/sessions/${id}/fs?path=${encodeURIComponent(p)}`);
        expect(res.status, p).to.equal(400);
      }
      expect((await d.delete(`/sessions/${id}/fs`)).status).to.equal(400);
      expect((await d.delete(`/sessions/${id}/fs?path=nope.txt`)).status).to.equal(404);
      expect(existsSync(join(cwd, "README.md"))).to.equal(true);
    });
  });

  describe("GET /sessions/{id}/fs/search", () => {
    it("finds names case-insensitively, skips .git and .gitignore'd entries", async () => {
      writeFileSync(join(cwd, ".gitignore"), "build/\n*.log\n!keep.log\n");
      mkdirSync(join(cwd, "build"));
      writeFileSync(join(cwd, "build", "needle-built.js"), "");
      writeFileSync(join(cwd, "needle.log"), "");
      writeFileSync(join(cwd, "keep.log"), "");
      writeFileSync(join(cwd, ".git", "needle"), "");
      mkdirSync(join(cwd, "src", "sub"));
      writeFileSync(join(cwd, "src", "sub", ".gitignore"), "NEEDLE-local.md\n");
      writeFileSync(join(cwd, "src", "sub", "NEEDLE-local.md"), "");
      writeFileSync(join(cwd, "src", "sub", "Needle-2.md"), "");
      const res = await d.get(`/sessions/${id}/fs/search?q=NEEDLE`);
      expect(res.status).to.equal(200);
      expect(res.body.truncated).to.equal(false);
      expect(res.body.results).to.deep.equal([
        { path: "src/deep/needle.txt", type: "file" },
        { path: "src/sub/Needle-2.md", type: "file" },
      ]);
      const logs = await d.get(`/sessions/${id}/fs/search?q=.log`);
      expect(logs.body.results.map((r: { path: string }) => r.path)).to.deep.equal(["keep.log"]);
      const byPath = await d.get(`/sessions/${id}/fs/search?q=${encodeURIComponent("deep/need")}`);
      expect(byPath.body.results.map((r: { path: string }) => r.path)).to.deep.equal(["src/deep/needle.txt"]);
    });

    it("applies the .gitignore of the repository above a session in a subdirectory", async () => {
      writeFileSync(join(cwd, ".gitignore"), "src/deep/\n");
      const sub = await d.createSession({ cwd: join(cwd, "src") });
      const res = await d.get(`/sessions/${sub}/fs/search?q=needle`);
      expect(res.body.results).to.deep.equal([]);
      const main = await d.get(`/sessions/${sub}/fs/search?q=main`);
      expect(main.body.results).to.deep.equal([{ path: "main.ts", type: "file" }]);
    });

    it("is bounded by limit and says so; a blank query finds nothing", async () => {
      for (let i = 0; i < 5; i++) writeFileSync(join(cwd, `match-${i}.txt`), "");
      const res = await d.get(`/sessions/${id}/fs/search?q=match&limit=3`);
      expect(res.body.results).to.have.length(3);
      expect(res.body.truncated).to.equal(true);
      expect((await d.get(`/sessions/${id}/fs/search?q=%20`)).body).to.deep.equal({ results: [], truncated: false });
      expect((await d.get(`/sessions/${id}/fs/search?q=x&limit=0`)).status).to.equal(400);
      expect((await d.get("/sessions/nope/fs/search?q=x")).status).to.equal(404);
    });
  });

  describe("GET /sessions/{id}/fs/download", () => {
    it("sends the bytes as an attachment with an exact file name", async () => {
      const name = 'résumé "v1".txt';
      writeFileSync(join(cwd, name), "bytes\u0000here");
      const res = await getBytes(`/sessions/${id}/fs/download?path=${encodeURIComponent(name)}`);
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
      writeFileSync(join(cwd, "big.bin"), big);
      const res = await getBytes(`/sessions/${id}/fs/download?path=big.bin`);
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-length")).to.equal(String(big.length));
      expect(res.bytes.equals(big)).to.equal(true);
    });

    it("serves raster images inline on request, never SVG", async () => {
      writeFileSync(join(cwd, "pic.png"), PNG);
      writeFileSync(join(cwd, "pic.svg"), "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>");
      const png = await getBytes(`/sessions/${id}/fs/download?path=pic.png&inline=1`);
      expect(png.headers.get("content-type")).to.equal("image/png");
      expect(png.headers.get("content-disposition")).to.match(/^inline;/);
      const svg = await getBytes(`/sessions/${id}/fs/download?path=pic.svg&inline=1`);
      expect(svg.headers.get("content-type")).to.equal("application/octet-stream");
      expect(svg.headers.get("content-disposition")).to.match(/^attachment;/);
    });

    it("answers 400 for directories and 404 for missing files", async () => {
      expect((await getBytes(`/sessions/${id}/fs/download?path=src`)).status).to.equal(400);
      expect((await getBytes(`/sessions/${id}/fs/download?path=.`)).status).to.equal(400);
      expect((await getBytes(`/sessions/${id}/fs/download?path=nope`)).status).to.equal(404);
      expect((await getBytes(`/sessions/${id}/fs/download`)).status).to.equal(400);
    });
  });

  describe("POST /sessions/{id}/fs/rename", () => {
    it("renames in place ({path, name}) and moves ({from, to})", async () => {
      const res = await d.post(`/sessions/${id}/fs/rename`, { path: "README.md", name: "README.txt" });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ ok: true, from: "README.md", path: "README.txt" });
      expect(readFileSync(join(cwd, "README.txt"), "utf8")).to.equal("# hello\n");
      const moved = await d.post(`/sessions/${id}/fs/rename`, { from: "README.txt", to: "src/deep/README.txt" });
      expect(moved.body.path).to.equal("src/deep/README.txt");
      expect(existsSync(join(cwd, "src", "deep", "README.txt"))).to.equal(true);
    });

    it("never overwrites: an existing destination is a 409 and both files stay", async () => {
      writeFileSync(join(cwd, "other.md"), "other");
      const res = await d.post(`/sessions/${id}/fs/rename`, { path: "README.md", name: "other.md" });
      expect(res.status).to.equal(409);
      expect(res.body.error).to.match(/exists/);
      expect(readFileSync(join(cwd, "other.md"), "utf8")).to.equal("other");
      expect(readFileSync(join(cwd, "README.md"), "utf8")).to.equal("# hello\n");
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
        const res = await d.post(`/sessions/${id}/fs/rename`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error).to.be.a("string");
      }
      expect((await d.post(`/sessions/${id}/fs/rename`, { path: "nope", name: "x" })).status).to.equal(404);
      expect((await d.post(`/sessions/${id}/fs/rename`, { path: "README.md", to: "nodir/x" })).status).to.equal(404);
      expect((await d.post(`/sessions/${id}/fs/rename`, { path: "README.md", to: 3 })).status).to.equal(400);
    });
  });

  describe("attachments", () => {
    it("uploads, lists, downloads and deletes", async () => {
      const up = await d.post(`/sessions/${id}/inputs/upload`, { name: "notes.txt", dataUrl: dataUrl("hello notes") });
      expect(up.status).to.equal(200);
      expect(up.body).to.include({ ok: true, name: "notes.txt", size: 11, mimeType: "text/plain" });
      expect(up.body.path).to.equal(join(d.home, "inputs", id, "notes.txt"));
      expect(readFileSync(up.body.path, "utf8")).to.equal("hello notes");
      expect(lstatSync(up.body.path).mode & 0o777).to.equal(0o600);

      const list = await d.get(`/sessions/${id}/inputs`);
      expect(list.body.dir).to.equal(join(d.home, "inputs", id));
      expect(list.body.entries).to.have.length(1);
      expect(list.body.entries[0]).to.include({ name: "notes.txt", size: 11, path: up.body.path });

      const dl = await getBytes(`/sessions/${id}/inputs/download?name=notes.txt`);
      expect(dl.status).to.equal(200);
      expect(dl.headers.get("content-type")).to.equal("application/octet-stream");
      expect(dl.bytes.toString()).to.equal("hello notes");
      expect((await getBytes(`/sessions/${id}/inputs/download?path=notes.txt`)).status).to.equal(200);

      expect((await d.delete(`/sessions/${id}/inputs?name=notes.txt`)).body).to.deep.equal({ ok: true });
      expect((await d.get(`/sessions/${id}/inputs`)).body.entries).to.deep.equal([]);
      expect((await d.delete(`/sessions/${id}/inputs?name=notes.txt`)).status).to.equal(404);
      expect((await getBytes(`/sessions/${id}/inputs/download?name=notes.txt`)).status).to.equal(404);
    });

    it("gives colliding names a free suffix and never overwrites", async () => {
      const names: string[] = [];
      for (const text of ["one", "two", "three"]) {
        names.push(
          (await d.post(`/sessions/${id}/inputs/upload`, { name: "a.txt", dataUrl: dataUrl(text) })).body.name,
        );
      }
      expect(names).to.deep.equal(["a.txt", "a (1).txt", "a (2).txt"]);
      const dir = join(d.home, "inputs", id);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).to.equal("one");
      expect(readFileSync(join(dir, "a (2).txt"), "utf8")).to.equal("three");
      const noExt = await d.post(`/sessions/${id}/inputs/upload`, { name: "Makefile", dataUrl: dataUrl("x") });
      const again = await d.post(`/sessions/${id}/inputs/upload`, { name: "Makefile", dataUrl: dataUrl("y") });
      expect([noExt.body.name, again.body.name]).to.deep.equal(["Makefile", "Makefile (1)"]);
    });

    it("sanitises names: last path segment only, no dot-files, nothing outside the directory", async () => {
      const up = await d.post(`/sessions/${id}/inputs/upload`, { name: "../../evil.txt", dataUrl: dataUrl("x") });
      expect(up.body.name).to.equal("evil.txt");
      expect(up.body.path).to.equal(join(d.home, "inputs", id, "evil.txt"));
      const win = await d.post(`/sessions/${id}/inputs/upload`, {
        name: "C:\\fakepath\\report.pdf",
        dataUrl: dataUrl("x"),
      });
      expect(win.body.name).to.equal("report.pdf");
      for (const name of ["..", ".", ".env", "dir/", "   "]) {
        const res = await d.post(`/sessions/${id}/inputs/upload`, { name, dataUrl: dataUrl("x") });
        expect(res.status, name).to.equal(400);
      }
      expect(existsSync(join(d.home, "evil.txt"))).to.equal(false);
      for (const name of ["../x", "..", ".hidden/../x"]) {
        expect((await d.delete(`/sessions/${id}/inputs?name=${encodeURIComponent(name)}`)).status, name).to.be.oneOf([
          400, 404,
        ]);
      }
      expect((await d.delete(`/sessions/${id}/inputs?name=..`)).status).to.equal(400);
      expect((await d.delete(`/sessions/${id}/inputs`)).status).to.equal(400);
    });

    it("refuses executables by extension, declared type and content", async () => {
      for (const name of ["setup.exe", "run.sh", "x.BAT", "y.cmd", "z.ps1", "lib.dll", "lib.so", "App.app", "k.jar"]) {
        const res = await d.post(`/sessions/${id}/inputs/upload`, { name, dataUrl: dataUrl("x") });
        expect(res.status, name).to.equal(400);
        expect(res.body.error).to.match(/Executable/);
      }
      const mime = await d.post(`/sessions/${id}/inputs/upload`, {
        name: "innocent.txt",
        dataUrl: dataUrl("MZ", "application/x-msdownload"),
      });
      expect(mime.status).to.equal(400);
      const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), Buffer.alloc(64)]);
      const sniffed = await d.post(`/sessions/${id}/inputs/upload`, {
        name: "photo.png",
        dataUrl: dataUrl(elf, "image/png"),
      });
      expect(sniffed.status).to.equal(400);
      expect(sniffed.body.error).to.match(/ELF/);
      expect((await d.get(`/sessions/${id}/inputs`)).body.entries).to.deep.equal([]);
    });

    it("caps the decoded size (413) and rejects malformed data URLs (400)", async () => {
      const atCap = await d.post(`/sessions/${id}/inputs/upload`, {
        name: "max.bin.txt",
        dataUrl: dataUrl(Buffer.alloc(MAX_UPLOAD, 65)),
      });
      expect(atCap.status).to.equal(200);
      const over = await d.post(`/sessions/${id}/inputs/upload`, {
        name: "big.txt",
        dataUrl: dataUrl(Buffer.alloc(MAX_UPLOAD + 1, 65)),
      });
      expect(over.status).to.equal(413);
      expect(over.body.error).to.match(/too large/);
      const huge = await d.post(`/sessions/${id}/inputs/upload`, {
        name: "huge.txt",
        dataUrl: dataUrl(Buffer.alloc(MAX_UPLOAD * 2, 65)),
      });
      expect(huge.status).to.equal(413);
      for (const bad of ["hello", "data:text/plain;base64", "data:text/plain;base64,@@@@"]) {
        const res = await d.post(`/sessions/${id}/inputs/upload`, { name: "x.txt", dataUrl: bad });
        expect(res.status, bad).to.equal(400);
      }
      const plain = await d.post(`/sessions/${id}/inputs/upload`, { name: "p.txt", dataUrl: "data:,hello%20world" });
      expect(plain.body).to.include({ size: 11, mimeType: "text/plain" });
      expect((await d.post(`/sessions/${id}/inputs/upload`, { name: "x.txt" })).status).to.equal(400);
      expect((await d.post("/sessions/nope/inputs/upload", { name: "x.txt", dataUrl: dataUrl("x") })).status).to.equal(
        404,
      );
    });

    it("removes a session's attachments with the session", async () => {
      await d.post(`/sessions/${id}/inputs/upload`, { name: "a.txt", dataUrl: dataUrl("x") });
      const dir = join(d.home, "inputs", id);
      expect(existsSync(dir)).to.equal(true);
      expect((await d.delete(`/sessions/${id}/permanent`)).status).to.equal(200);
      expect(existsSync(dir)).to.equal(false);
      expect((await d.get(`/sessions/${id}/inputs`)).status).to.equal(404);
    });
  });

  describe("directory browsing", () => {
    beforeEach(() => {
      rmSync(browseRoot, { recursive: true, force: true });
      mkdirSync(join(browseRoot, "projects", "alpha"), { recursive: true });
      mkdirSync(join(browseRoot, ".hidden"));
      writeFileSync(join(browseRoot, "file.txt"), "f");
    });

    it("lists directories of the first root by default; files and hidden entries on request", async () => {
      const res = await d.get("/browse");
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ path: browseRoot, parent: null, root: browseRoot, truncated: false });
      expect(res.body.roots).to.deep.equal([browseRoot]);
      expect(res.body.entries).to.deep.equal([{ name: "projects", path: join(browseRoot, "projects"), type: "dir" }]);
      const all = await d.get(`/browse?path=${encodeURIComponent(browseRoot)}&files=1&hidden=true`);
      expect(all.body.entries.map((e: { name: string }) => e.name)).to.deep.equal([".hidden", "projects", "file.txt"]);
      const sub = await d.get(`/browse?path=${encodeURIComponent(join(browseRoot, "projects"))}`);
      expect(sub.body.parent).to.equal(browseRoot);
      expect(sub.body.entries.map((e: { name: string }) => e.name)).to.deep.equal(["alpha"]);
    });

    it("stays inside the roots: outside, relative, '..' and escaping links are 400; missing is 404", async () => {
      for (const p of [outside, "projects", `${browseRoot}/projects/../..`, "/"]) {
        const res = await d.get(`/browse?path=${encodeURIComponent(p)}`);
        expect(res.status, p).to.equal(400);
        expect(res.body.error).to.be.a("string");
      }
      symlinkSync(outside, join(browseRoot, "link-out"));
      const list = await d.get(`/browse?path=${encodeURIComponent(browseRoot)}&files=1`);
      expect(list.body.entries.find((e: { name: string }) => e.name === "link-out")).to.include({ type: "symlink" });
      expect((await d.get(`/browse?path=${encodeURIComponent(join(browseRoot, "link-out"))}`)).status).to.equal(400);
      expect((await d.get(`/browse?path=${encodeURIComponent(join(browseRoot, "nope"))}`)).status).to.equal(404);
      expect((await d.get(`/browse?path=${encodeURIComponent(join(browseRoot, "file.txt"))}`)).status).to.equal(400);
    });

    it("creates directories, never over an existing name", async () => {
      const res = await d.post("/browse/mkdir", { path: join(browseRoot, "projects"), name: "beta" });
      expect(res.body).to.deep.equal({ ok: true, path: join(browseRoot, "projects", "beta") });
      expect(lstatSync(join(browseRoot, "projects", "beta")).isDirectory()).to.equal(true);
      const dflt = await d.post("/browse/mkdir", { name: "top" });
      expect(dflt.body.path).to.equal(join(browseRoot, "top"));
      expect((await d.post("/browse/mkdir", { path: join(browseRoot, "projects"), name: "beta" })).status).to.equal(
        409,
      );
      expect((await d.post("/browse/mkdir", { name: "file.txt" })).status).to.equal(409);
      for (const body of [
        { name: "a/b" },
        { name: ".." },
        { path: outside, name: "x" },
        { path: "rel", name: "x" },
        {},
      ]) {
        expect((await d.post("/browse/mkdir", body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect(existsSync(join(outside, "x"))).to.equal(false);
    });

    it("deletes files and empty directories, never a root or a non-empty directory", async () => {
      expect((await d.delete(`/browse?path=${encodeURIComponent(join(browseRoot, "file.txt"))}`)).body).to.deep.equal({
        ok: true,
      });
      expect(existsSync(join(browseRoot, "file.txt"))).to.equal(false);
      const full = await d.delete(`/browse?path=${encodeURIComponent(join(browseRoot, "projects"))}`);
      expect(full.status).to.equal(409);
      expect(existsSync(join(browseRoot, "projects", "alpha"))).to.equal(true);
      expect(
        (await d.delete(`/browse?path=${encodeURIComponent(join(browseRoot, "projects", "alpha"))}`)).status,
      ).to.equal(200);
      expect(existsSync(join(browseRoot, "projects", "alpha"))).to.equal(false);
      expect((await d.delete(`/browse?path=${encodeURIComponent(browseRoot)}`)).status).to.equal(400);
      expect((await d.delete(`/browse?path=${encodeURIComponent(join(outside, "secret.txt"))}`)).status).to.equal(400);
      expect((await d.delete("/browse?path=/")).status).to.equal(400);
      expect((await d.delete("/browse")).status).to.equal(400);
      expect((await d.delete(`/browse?path=${encodeURIComponent(join(browseRoot, "nope"))}`)).status).to.equal(404);
      symlinkSync(outside, join(browseRoot, "link-out"));
      expect((await d.delete(`/browse?path=${encodeURIComponent(join(browseRoot, "link-out"))}`)).status).to.equal(200);
      expect(readFileSync(join(outside, "secret.txt"), "utf8")).to.equal("top secret");
    });
  });

  describe("GET /sessions/{id}/image", () => {
    it("serves the decoded image of a user message and of a tool result, 404 when absent", async () => {
      const store = d.daemon.services.get(SessionStoreToken);
      const url = `data:image/png;base64,${PNG.toString("base64")}`;
      const gif = Buffer.from("GIF89a-fake");
      store.appendMessage(id, {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url } },
        ],
      });
      store.appendMessage(id, {
        role: "assistant",
        content: null,
        toolCalls: [{ id: "c1", name: "read", arguments: "{}" }],
      });
      store.appendMessage(id, {
        role: "tool",
        toolCallId: "c1",
        toolName: "read",
        content: [
          { type: "text", text: "an image" },
          { type: "image_url", image_url: { url: "https://example.com/not-stored.png" } },
          { type: "image_url", image_url: { url: `data:image/gif;base64,${gif.toString("base64")}` } },
        ],
      });
      const view = await d.get(`/sessions/${id}`);
      const userImage = view.body.messages[0].images[0] as string;
      expect(userImage).to.match(/\/image\?seq=\d+&idx=0$/);
      const res = await getBytes(userImage.replace("/api/v1", ""));
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.equal("image/png");
      expect(res.headers.get("cache-control")).to.match(/immutable/);
      expect(res.bytes.equals(PNG)).to.equal(true);

      const toolImages = view.body.messages[1].toolCalls[0].images as string[];
      expect(toolImages).to.have.length(2);
      const second = await getBytes(toolImages[1]!.replace("/api/v1", ""));
      expect(second.headers.get("content-type")).to.equal("image/gif");
      expect(second.bytes.equals(gif)).to.equal(true);
      expect((await getBytes(toolImages[0]!.replace("/api/v1", ""))).status).to.equal(404);

      const seq = view.body.messages[0].seq;
      expect((await getBytes(`/sessions/${id}/image?seq=${seq}&idx=1`)).status).to.equal(404);
      expect((await getBytes(`/sessions/${id}/image?seq=9999`)).status).to.equal(404);
      expect((await getBytes(`/sessions/${id}/image?seq=abc`)).status).to.equal(400);
      expect((await getBytes(`/sessions/${id}/image`)).status).to.equal(400);
      expect((await getBytes(`/sessions/nope/image?seq=${seq}`)).status).to.equal(404);
    });

    it("is where display code links images through the plugin's service; without the plugin no URL is invented", async () => {
      const withoutFiles = builtinPlugins.filter((p) => p.manifest.id !== "files");
      const bare = await startTestDaemon({ builtins: withoutFiles.map(builtinSource) });
      try {
        const sid = await bare.createSession();
        bare.daemon.services.get(SessionStoreToken).appendMessage(sid, {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } },
          ],
        });
        const view = await bare.get(`/sessions/${sid}`);
        expect(view.status).to.equal(200);
        expect(view.body.messages[0].content).to.equal("look");
        expect(view.body.messages[0]).to.not.have.property("images");
        expect((await bare.get(`/sessions/${sid}/image?seq=${view.body.messages[0].seq}`)).status).to.equal(404);
      } finally {
        await bare.cleanup();
      }
    });
  });

  it("documents every route in a valid OpenAPI document", async () => {
    const doc = (await d.get("/openapi.json", { auth: false })).body;
    const result = await validate(structuredClone(doc));
    expect(result.valid, result.valid ? "" : compileErrors(result)).to.equal(true);
    const ops = [
      ["get", "/sessions/{id}/fs"],
      ["delete", "/sessions/{id}/fs"],
      ["get", "/sessions/{id}/fs/search"],
      ["get", "/sessions/{id}/fs/download"],
      ["post", "/sessions/{id}/fs/rename"],
      ["get", "/sessions/{id}/inputs"],
      ["delete", "/sessions/{id}/inputs"],
      ["post", "/sessions/{id}/inputs/upload"],
      ["get", "/sessions/{id}/inputs/download"],
      ["get", "/browse"],
      ["delete", "/browse"],
      ["post", "/browse/mkdir"],
      ["get", "/sessions/{id}/image"],
    ] as const;
    for (const [method, p] of ops) {
      const op = doc.paths[`/api/v1${p}`]?.[method];
      expect(op, `${method} ${p}`).to.be.an("object");
      expect(op.responses).to.have.property("200");
    }
    expect(doc.paths["/api/v1/sessions/{id}/fs/rename"].post.responses).to.have.property("409");
  });

  describe("unit: names and content sniffing", () => {
    it("builds collision names before the extension", () => {
      expect(candidateName("a.txt", 0)).to.equal("a.txt");
      expect(candidateName("a.txt", 1)).to.equal("a (1).txt");
      expect(candidateName("archive.tar.gz", 2)).to.equal("archive.tar (2).gz");
      expect(candidateName("README", 3)).to.equal("README (3)");
    });

    it("sanitises names and recognises PE headers", () => {
      expect(sanitizeName("a/b\\c<d>.txt")).to.equal("c_d_.txt");
      expect(sanitizeName("name. . ")).to.equal("name");
      expect(Buffer.byteLength(sanitizeName(`${"é".repeat(300)}.md`))).to.be.at.most(200);
      const pe = Buffer.alloc(0x100);
      pe.write("MZ", 0);
      pe.writeUInt32LE(0x80, 0x3c);
      pe.write("PE\0\0", 0x80, "latin1");
      expect(executableFormat(pe)).to.equal("PE");
      expect(
        executableFormat(Buffer.from("MZ is just text here, nothing more to see, really nothing at all...")),
      ).to.equal(undefined);
    });
  });
});
