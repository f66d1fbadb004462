import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { filesFixture } from "./support/files.js";

describe("files plugin: session files, attachments, browsing, images", function () {
  this.timeout(20000);
  const { fx } = filesFixture();

  describe("directory browsing", () => {
    beforeEach(() => {
      rmSync(fx.browseRoot, { recursive: true, force: true });
      mkdirSync(join(fx.browseRoot, "projects", "alpha"), { recursive: true });
      mkdirSync(join(fx.browseRoot, ".hidden"));
      writeFileSync(join(fx.browseRoot, "file.txt"), "f");
    });

    it("lists directories of the first root by default; files and hidden entries on request", async () => {
      const res = await fx.d.get("/browse");
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ path: fx.browseRoot, parent: null, root: fx.browseRoot, truncated: false });
      expect(res.body.roots).to.deep.equal([fx.browseRoot]);
      expect(res.body.entries).to.deep.equal([
        { name: "projects", path: join(fx.browseRoot, "projects"), type: "dir" },
      ]);
      const all = await fx.d.get(`/browse?path=${encodeURIComponent(fx.browseRoot)}&files=1&hidden=true`);
      expect(all.body.entries.map((e: { name: string }) => e.name)).to.deep.equal([".hidden", "projects", "file.txt"]);
      const sub = await fx.d.get(`/browse?path=${encodeURIComponent(join(fx.browseRoot, "projects"))}`);
      expect(sub.body.parent).to.equal(fx.browseRoot);
      expect(sub.body.entries.map((e: { name: string }) => e.name)).to.deep.equal(["alpha"]);
    });

    it("stays inside the roots: outside, relative, '..' and escaping links are 400; missing is 404", async () => {
      for (const p of [fx.outside, "projects", `${fx.browseRoot}/projects/../..`, "/"]) {
        const res = await fx.d.get(`/browse?path=${encodeURIComponent(p)}`);
        expect(res.status, p).to.equal(400);
        expect(res.body.error).to.be.a("string");
      }
      symlinkSync(fx.outside, join(fx.browseRoot, "link-out"));
      const list = await fx.d.get(`/browse?path=${encodeURIComponent(fx.browseRoot)}&files=1`);
      expect(list.body.entries.find((e: { name: string }) => e.name === "link-out")).to.include({ type: "symlink" });
      expect((await fx.d.get(`/browse?path=${encodeURIComponent(join(fx.browseRoot, "link-out"))}`)).status).to.equal(
        400,
      );
      expect((await fx.d.get(`/browse?path=${encodeURIComponent(join(fx.browseRoot, "nope"))}`)).status).to.equal(404);
      expect((await fx.d.get(`/browse?path=${encodeURIComponent(join(fx.browseRoot, "file.txt"))}`)).status).to.equal(
        400,
      );
    });

    it("creates directories, never over an existing name", async () => {
      const res = await fx.d.post("/browse/mkdir", { path: join(fx.browseRoot, "projects"), name: "beta" });
      expect(res.body).to.deep.equal({ ok: true, path: join(fx.browseRoot, "projects", "beta") });
      expect(lstatSync(join(fx.browseRoot, "projects", "beta")).isDirectory()).to.equal(true);
      const dflt = await fx.d.post("/browse/mkdir", { name: "top" });
      expect(dflt.body.path).to.equal(join(fx.browseRoot, "top"));
      expect(
        (await fx.d.post("/browse/mkdir", { path: join(fx.browseRoot, "projects"), name: "beta" })).status,
      ).to.equal(409);
      expect((await fx.d.post("/browse/mkdir", { name: "file.txt" })).status).to.equal(409);
      for (const body of [
        { name: "a/b" },
        { name: ".." },
        { path: fx.outside, name: "x" },
        { path: "rel", name: "x" },
        {},
      ]) {
        expect((await fx.d.post("/browse/mkdir", body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect(existsSync(join(fx.outside, "x"))).to.equal(false);
    });

    it("deletes files and empty directories, never a root or a non-empty directory", async () => {
      expect(
        (await fx.d.delete(`/browse?path=${encodeURIComponent(join(fx.browseRoot, "file.txt"))}`)).body,
      ).to.deep.equal({
        ok: true,
      });
      expect(existsSync(join(fx.browseRoot, "file.txt"))).to.equal(false);
      const full = await fx.d.delete(`/browse?path=${encodeURIComponent(join(fx.browseRoot, "projects"))}`);
      expect(full.status).to.equal(409);
      expect(existsSync(join(fx.browseRoot, "projects", "alpha"))).to.equal(true);
      expect(
        (await fx.d.delete(`/browse?path=${encodeURIComponent(join(fx.browseRoot, "projects", "alpha"))}`)).status,
      ).to.equal(200);
      expect(existsSync(join(fx.browseRoot, "projects", "alpha"))).to.equal(false);
      expect((await fx.d.delete(`/browse?path=${encodeURIComponent(fx.browseRoot)}`)).status).to.equal(400);
      expect((await fx.d.delete(`/browse?path=${encodeURIComponent(join(fx.outside, "secret.txt"))}`)).status).to.equal(
        400,
      );
      expect((await fx.d.delete("/browse?path=/")).status).to.equal(400);
      expect((await fx.d.delete("/browse")).status).to.equal(400);
      expect((await fx.d.delete(`/browse?path=${encodeURIComponent(join(fx.browseRoot, "nope"))}`)).status).to.equal(
        404,
      );
      symlinkSync(fx.outside, join(fx.browseRoot, "link-out"));
      expect(
        (await fx.d.delete(`/browse?path=${encodeURIComponent(join(fx.browseRoot, "link-out"))}`)).status,
      ).to.equal(200);
      expect(readFileSync(join(fx.outside, "secret.txt"), "utf8")).to.equal("top secret");
    });
  });
});
