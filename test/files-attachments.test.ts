import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { dataUrl, filesFixture, MAX_UPLOAD } from "./support/files.js";

describe("files plugin: session files, attachments, browsing, images", function () {
  this.timeout(20000);
  const { fx, getBytes } = filesFixture();

  describe("attachments", () => {
    it("uploads, lists, downloads and deletes", async () => {
      const up = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, {
        name: "notes.txt",
        dataUrl: dataUrl("hello notes"),
      });
      expect(up.status).to.equal(200);
      expect(up.body).to.include({ ok: true, name: "notes.txt", size: 11, mimeType: "text/plain" });
      expect(up.body.path).to.equal(join(fx.d.home, "inputs", fx.id, "notes.txt"));
      expect(readFileSync(up.body.path, "utf8")).to.equal("hello notes");
      expect(lstatSync(up.body.path).mode & 0o777).to.equal(0o600);

      const list = await fx.d.get(`/sessions/${fx.id}/inputs`);
      expect(list.body.dir).to.equal(join(fx.d.home, "inputs", fx.id));
      expect(list.body.entries).to.have.length(1);
      expect(list.body.entries[0]).to.include({ name: "notes.txt", size: 11, path: up.body.path });

      const dl = await getBytes(`/sessions/${fx.id}/inputs/download?name=notes.txt`);
      expect(dl.status).to.equal(200);
      expect(dl.headers.get("content-type")).to.equal("application/octet-stream");
      expect(dl.bytes.toString()).to.equal("hello notes");
      expect((await getBytes(`/sessions/${fx.id}/inputs/download?path=notes.txt`)).status).to.equal(200);

      expect((await fx.d.delete(`/sessions/${fx.id}/inputs?name=notes.txt`)).body).to.deep.equal({ ok: true });
      expect((await fx.d.get(`/sessions/${fx.id}/inputs`)).body.entries).to.deep.equal([]);
      expect((await fx.d.delete(`/sessions/${fx.id}/inputs?name=notes.txt`)).status).to.equal(404);
      expect((await getBytes(`/sessions/${fx.id}/inputs/download?name=notes.txt`)).status).to.equal(404);
    });

    it("gives colliding names a free suffix and never overwrites", async () => {
      const names: string[] = [];
      for (const text of ["one", "two", "three"]) {
        names.push(
          (await fx.d.post(`/sessions/${fx.id}/inputs/upload`, { name: "a.txt", dataUrl: dataUrl(text) })).body.name,
        );
      }
      expect(names).to.deep.equal(["a.txt", "a (1).txt", "a (2).txt"]);
      const dir = join(fx.d.home, "inputs", fx.id);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).to.equal("one");
      expect(readFileSync(join(dir, "a (2).txt"), "utf8")).to.equal("three");
      const noExt = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, { name: "Makefile", dataUrl: dataUrl("x") });
      const again = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, { name: "Makefile", dataUrl: dataUrl("y") });
      expect([noExt.body.name, again.body.name]).to.deep.equal(["Makefile", "Makefile (1)"]);
    });

    it("sanitises names: last path segment only, no dot-files, nothing outside the directory", async () => {
      const up = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, { name: "../../evil.txt", dataUrl: dataUrl("x") });
      expect(up.body.name).to.equal("evil.txt");
      expect(up.body.path).to.equal(join(fx.d.home, "inputs", fx.id, "evil.txt"));
      const win = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, {
        name: "C:\\fakepath\\report.pdf",
        dataUrl: dataUrl("x"),
      });
      expect(win.body.name).to.equal("report.pdf");
      for (const name of ["..", ".", ".env", "dir/", "   "]) {
        const res = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, { name, dataUrl: dataUrl("x") });
        expect(res.status, name).to.equal(400);
      }
      expect(existsSync(join(fx.d.home, "evil.txt"))).to.equal(false);
      for (const name of ["../x", "..", ".hidden/../x"]) {
        expect(
          (await fx.d.delete(`/sessions/${fx.id}/inputs?name=${encodeURIComponent(name)}`)).status,
          name,
        ).to.be.oneOf([400, 404]);
      }
      expect((await fx.d.delete(`/sessions/${fx.id}/inputs?name=..`)).status).to.equal(400);
      expect((await fx.d.delete(`/sessions/${fx.id}/inputs`)).status).to.equal(400);
    });

    it("refuses executables by extension, declared type and content", async () => {
      for (const name of ["setup.exe", "run.sh", "x.BAT", "y.cmd", "z.ps1", "lib.dll", "lib.so", "App.app", "k.jar"]) {
        const res = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, { name, dataUrl: dataUrl("x") });
        expect(res.status, name).to.equal(400);
        expect(res.body.error).to.match(/Executable/);
      }
      const mime = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, {
        name: "innocent.txt",
        dataUrl: dataUrl("MZ", "application/x-msdownload"),
      });
      expect(mime.status).to.equal(400);
      const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), Buffer.alloc(64)]);
      const sniffed = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, {
        name: "photo.png",
        dataUrl: dataUrl(elf, "image/png"),
      });
      expect(sniffed.status).to.equal(400);
      expect(sniffed.body.error).to.match(/ELF/);
      expect((await fx.d.get(`/sessions/${fx.id}/inputs`)).body.entries).to.deep.equal([]);
    });

    it("caps the decoded size (413) and rejects malformed data URLs (400)", async () => {
      const atCap = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, {
        name: "max.bin.txt",
        dataUrl: dataUrl(Buffer.alloc(MAX_UPLOAD, 65)),
      });
      expect(atCap.status).to.equal(200);
      const over = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, {
        name: "big.txt",
        dataUrl: dataUrl(Buffer.alloc(MAX_UPLOAD + 1, 65)),
      });
      expect(over.status).to.equal(413);
      expect(over.body.error).to.match(/too large/);
      const huge = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, {
        name: "huge.txt",
        dataUrl: dataUrl(Buffer.alloc(MAX_UPLOAD * 2, 65)),
      });
      expect(huge.status).to.equal(413);
      for (const bad of ["hello", "data:text/plain;base64", "data:text/plain;base64,@@@@"]) {
        const res = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, { name: "x.txt", dataUrl: bad });
        expect(res.status, bad).to.equal(400);
      }
      const plain = await fx.d.post(`/sessions/${fx.id}/inputs/upload`, {
        name: "p.txt",
        dataUrl: "data:,hello%20world",
      });
      expect(plain.body).to.include({ size: 11, mimeType: "text/plain" });
      expect((await fx.d.post(`/sessions/${fx.id}/inputs/upload`, { name: "x.txt" })).status).to.equal(400);
      expect(
        (await fx.d.post("/sessions/nope/inputs/upload", { name: "x.txt", dataUrl: dataUrl("x") })).status,
      ).to.equal(404);
    });

    it("removes a session's attachments with the session", async () => {
      await fx.d.post(`/sessions/${fx.id}/inputs/upload`, { name: "a.txt", dataUrl: dataUrl("x") });
      const dir = join(fx.d.home, "inputs", fx.id);
      expect(existsSync(dir)).to.equal(true);
      expect((await fx.d.delete(`/sessions/${fx.id}/permanent`)).status).to.equal(200);
      expect(existsSync(dir)).to.equal(false);
      expect((await fx.d.get(`/sessions/${fx.id}/inputs`)).status).to.equal(404);
    });
  });
});
