import { compileErrors, validate } from "@readme/openapi-parser";
import { expect } from "chai";
import { SessionStoreToken } from "../core/store.js";
import { builtinSource } from "../host/plugin-sources.js";
import { candidateName, executableFormat, sanitizeName } from "../plugins/files/index.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon } from "../testing/daemon.js";
import { filesFixture, PNG } from "./support/files.js";

describe("files plugin: session files, attachments, browsing, images", function () {
  this.timeout(20000);
  const { fx, getBytes } = filesFixture();

  describe("GET /sessions/{id}/image", () => {
    it("serves the decoded image of a user message and of a tool result, 404 when absent", async () => {
      const store = fx.d.daemon.services.get(SessionStoreToken);
      const url = `data:image/png;base64,${PNG.toString("base64")}`;
      const gif = Buffer.from("GIF89a-fake");
      store.appendMessage(fx.id, {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url } },
        ],
      });
      store.appendMessage(fx.id, {
        role: "assistant",
        content: null,
        toolCalls: [{ id: "c1", name: "read", arguments: "{}" }],
      });
      store.appendMessage(fx.id, {
        role: "tool",
        toolCallId: "c1",
        toolName: "read",
        content: [
          { type: "text", text: "an image" },
          { type: "image_url", image_url: { url: "https://example.com/not-stored.png" } },
          { type: "image_url", image_url: { url: `data:image/gif;base64,${gif.toString("base64")}` } },
        ],
      });
      const view = await fx.d.get(`/sessions/${fx.id}`);
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
      expect((await getBytes(`/sessions/${fx.id}/image?seq=${seq}&idx=1`)).status).to.equal(404);
      expect((await getBytes(`/sessions/${fx.id}/image?seq=9999`)).status).to.equal(404);
      expect((await getBytes(`/sessions/${fx.id}/image?seq=abc`)).status).to.equal(400);
      expect((await getBytes(`/sessions/${fx.id}/image`)).status).to.equal(400);
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
    const doc = (await fx.d.get("/openapi.json", { auth: false })).body;
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
