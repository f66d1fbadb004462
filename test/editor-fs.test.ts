import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { EditorFsBroker, EditorGoneError } from "../core/index.js";
import { startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "./support/fake-provider.js";
import type { SseClient } from "./support/sse.js";

/** An editor attached to a session over HTTP: the file tools ask it through editor_fs_request events. */
describe("editor file access (POST /sessions/{id}/editor)", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let sse: SseClient;
  let id: string;
  let cwd: string;

  beforeEach(async () => {
    fake = await startFakeProvider();
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-editor-")));
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "k", model: "m" } } });
    id = await d.createSession({ cwd });
    sse = await d.sse(`/sessions/${id}/events`);
  });
  afterEach(async () => {
    sse.close();
    await d.cleanup();
    await fake.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  const ended = (from: number) => sse.waitFor((f) => f.json?.type === "end", 20_000, from);

  it("reads the editor's text, refuses stale or unknown replies, and uses the disk once detached", async () => {
    writeFileSync(join(cwd, "a.ts"), "disk\n");
    expect((await d.post("/sessions/nope/editor", { readTextFile: true, writeTextFile: false })).status).to.equal(404);
    expect((await d.post(`/sessions/${id}/editor`, { readTextFile: "yes" })).status).to.equal(400);
    expect((await d.post(`/sessions/${id}/editor`, { readTextFile: true, writeTextFile: false })).status).to.equal(200);

    fake.script(tools([{ name: "read", args: { path: "a.ts" }, id: "r1" }]), text("ok"));
    await d.post(`/sessions/${id}/chat`, { text: "read it" });
    const req = (await sse.waitForType("editor_fs_request")).json;
    expect(req).to.include({ op: "read", path: join(cwd, "a.ts") });
    expect((await d.post(`/sessions/${id}/editor/reply`, { id: req.id, content: "buffer\n" })).status).to.equal(202);
    await ended(0);
    expect(sse.ofType("tool_end")[0]?.json.result.content).to.include("buffer").and.not.include("disk");
    expect((await d.post(`/sessions/${id}/editor/reply`, { id: req.id, content: "late" })).status).to.equal(409);
    expect((await d.post(`/sessions/${id}/editor/reply`, { id: "e_unknown", content: "x" })).status).to.equal(404);

    expect((await d.delete(`/sessions/${id}/editor`)).status).to.equal(200);
    const from = sse.frames.length;
    fake.script(tools([{ name: "read", args: { path: "a.ts" }, id: "r2" }]), text("ok"));
    await d.post(`/sessions/${id}/chat`, { text: "again" });
    await ended(from);
    const later = sse.frames.slice(from);
    expect(later.some((f) => f.json?.type === "editor_fs_request")).to.equal(false);
    expect(later.find((f) => f.json?.type === "tool_end")?.json.result.content).to.include("disk");
  });

  it("writes through the editor; an editor's refusal is the tool's error and nothing lands on disk", async () => {
    await d.post(`/sessions/${id}/editor`, { readTextFile: false, writeTextFile: true });
    fake.script(tools([{ name: "write", args: { path: "new.txt", content: "hello" }, id: "w1" }]), text("ok"));
    await d.post(`/sessions/${id}/chat`, { text: "write" });
    const req = (await sse.waitForType("editor_fs_request")).json;
    expect(req).to.include({ op: "write", path: join(cwd, "new.txt"), content: "hello" });
    await d.post(`/sessions/${id}/editor/reply`, { id: req.id, error: "the user closed the buffer" });
    await ended(0);
    const end = sse.ofType("tool_end")[0]?.json;
    expect(end.status).to.equal("error");
    expect(end.result.content).to.include("the user closed the buffer");
    expect(existsSync(join(cwd, "new.txt"))).to.equal(false);
  });

  it("creates a new file through the editor with edit (empty oldString)", async () => {
    await d.post(`/sessions/${id}/editor`, { readTextFile: false, writeTextFile: true });
    fake.script(
      tools([{ name: "edit", args: { filePath: "n.txt", oldString: "", newString: "fresh" }, id: "n1" }]),
      text("ok"),
    );
    await d.post(`/sessions/${id}/chat`, { text: "create" });
    const req = (await sse.waitForType("editor_fs_request")).json;
    expect(req).to.include({ op: "write", path: join(cwd, "n.txt"), content: "fresh" });
    await d.post(`/sessions/${id}/editor/reply`, { id: req.id });
    await ended(0);
    expect(sse.ofType("tool_end")[0]?.json.result.content).to.include("Created n.txt");
    expect(existsSync(join(cwd, "n.txt"))).to.equal(false);
  });

  it("edits the editor's buffer and saves through the editor", async () => {
    writeFileSync(join(cwd, "e.txt"), "old on disk\n");
    await d.post(`/sessions/${id}/editor`, { readTextFile: true, writeTextFile: true });
    fake.script(
      tools([{ name: "edit", args: { filePath: "e.txt", oldString: "unsaved", newString: "saved" }, id: "e1" }]),
      text("ok"),
    );
    await d.post(`/sessions/${id}/chat`, { text: "edit" });
    const read = (await sse.waitForType("editor_fs_request")).json;
    await d.post(`/sessions/${id}/editor/reply`, { id: read.id, content: "an unsaved line\n" });
    const write = (await sse.waitFor((f) => f.json?.type === "editor_fs_request" && f.json.op === "write")).json;
    expect(write.content).to.equal("an saved line\n");
    await d.post(`/sessions/${id}/editor/reply`, { id: write.id });
    await ended(0);
    expect(sse.ofType("tool_end")[0]?.json.status).to.equal("ok");
    expect(readFileSync(join(cwd, "e.txt"), "utf8")).to.equal("old on disk\n");
  });
});

describe("EditorFsBroker", () => {
  it("treats an editor that does not answer as gone: the request fails over and the editor is detached", async () => {
    const published: Array<Record<string, unknown>> = [];
    const broker = new EditorFsBroker((_id, e) => published.push(e), 20);
    broker.attach("s1", { readTextFile: true, writeTextFile: true });
    const fs = broker.forTool("s1", new AbortController().signal);
    const err = await fs?.read?.("/x").then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).to.be.instanceOf(EditorGoneError);
    expect(published).to.have.length(1);
    expect(broker.access("s1")).to.equal(undefined);
    expect(broker.forTool("s1", new AbortController().signal)).to.equal(undefined);
  });

  it("rejects a waiting request when the turn is aborted", async () => {
    const broker = new EditorFsBroker(() => {}, 60_000);
    broker.attach("s1", { readTextFile: true, writeTextFile: false });
    const ac = new AbortController();
    const fs = broker.forTool("s1", ac.signal);
    expect(fs?.write).to.equal(undefined);
    const pending = fs?.read?.("/x");
    ac.abort();
    const err = await pending?.then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.equal("aborted");
  });
});
