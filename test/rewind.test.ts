import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools, turn } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

type Call = { name: string; args: Record<string, unknown> };
const write = (path: string, content: string): Call => ({ name: "write", args: { path, content } });
const rm = (path: string): Call => ({ name: "bash", args: { command: `rm ${path}` } });

describe("rewind to any message, and /redo", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let dir: string;
  let id: string;
  let sse: SseClient;

  async function setUp(extraConfig: Json = {}) {
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: {
        provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" },
        permissionMode: "bypass",
        ...extraConfig,
      },
    });
    dir = realpathSync(mkdtempSync(join(tmpdir(), "agentd-rewind-")));
    writeFileSync(join(dir, "keep.txt"), "untouched\n");
    id = await d.createSession({ cwd: dir });
    sse = await d.sse(`/sessions/${id}/events`);
    await sse.waitForType("status");
  }
  afterEach(async () => {
    sse.close();
    fake.clearScript();
    await d.cleanup();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One turn running `calls`, then a final answer. */
  async function agentTurn(prompt: string, calls: Call[]) {
    fake.script(tools(calls), text(`${prompt} done`));
    const ends = sse.ofType("end").length;
    expect((await d.post(`/sessions/${id}/chat`, { text: prompt })).status).to.equal(202);
    await sse.waitFor(() => sse.ofType("end").length > ends, 20_000);
  }
  /** The files of the directory with their contents. */
  function files(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const f of readdirSync(dir).sort()) out[f] = readFileSync(join(dir, f), "utf8");
    return out;
  }
  const view = async () => (await d.get<Json>(`/sessions/${id}`)).body;
  const userSeqs = async () =>
    (await view()).messages.filter((m: Json) => m.role === "user").map((m: Json) => m.seq as number);
  const rewind = (messageSeq: unknown, restore?: unknown) =>
    d.post<Json>(`/sessions/${id}/rewind`, { messageSeq, ...(restore === undefined ? {} : { restore }) });
  const redo = () => d.post<Json>(`/sessions/${id}/command`, { command: "/redo" });

  /** Three turns: files created, edited and deleted. */
  async function threeTurns() {
    await agentTurn("turn one", [write("a.txt", "a1\n"), write("b.txt", "b1\n")]);
    await agentTurn("turn two", [write("a.txt", "a2\n"), rm("b.txt"), write("c.txt", "c2\n")]);
    await agentTurn("turn three", [write("c.txt", "c3\n"), write("d.txt", "d3\n")]);
    expect(files()).to.deep.equal({ "a.txt": "a2\n", "c.txt": "c3\n", "d.txt": "d3\n", "keep.txt": "untouched\n" });
    return userSeqs();
  }
  const latest = { "a.txt": "a2\n", "c.txt": "c3\n", "d.txt": "d3\n", "keep.txt": "untouched\n" };

  it("rewinds code, conversation and both across three turns, each undone by /redo", async () => {
    await setUp();
    const [s1, s2, s3] = await threeTurns();
    const fullCount = (await view()).messageCount;

    // The preview says which files would change.
    const preview = await d.get<Json>(`/sessions/${id}/rewind?messageSeq=${s2}`);
    expect(preview.status).to.equal(200);
    expect(preview.body).to.deep.include({ available: true, created: ["c.txt", "d.txt"], deleted: ["b.txt"] });
    expect(preview.body.modified).to.deep.equal(["a.txt"]);

    // code: the files as before turn two; the conversation stays.
    const code = await rewind(s2, "code");
    expect(code.status, code.text).to.equal(200);
    expect(code.body).to.deep.include({ action: "rewind", restore: "code", filesRestored: true });
    expect(code.body.removed).to.deep.equal(["c.txt", "d.txt"]);
    expect(files()).to.deep.equal({ "a.txt": "a1\n", "b.txt": "b1\n", "keep.txt": "untouched\n" });
    expect(await userSeqs()).to.deep.equal([s1, s2, s3]);
    const ev = await sse.waitForType("rewind");
    expect(ev.json).to.include({ fromSeq: s2, restore: "code" });
    expect(ev.json.messages.filter((m: Json) => m.role === "user")).to.have.length(3);
    await sse.waitFor((f) => f.json?.type === "session_update" && f.json.seq > ev.json.seq);
    expect((await redo()).body.data).to.include({ redone: true, action: "redo" });
    expect(files()).to.deep.equal(latest);
    expect((await redo()).body.data).to.deep.equal({ redone: false });

    // conversation: the message and everything after it go; the files stay.
    const conv = await rewind(s3, "conversation");
    expect(conv.body).to.include({ filesRestored: false });
    expect(files()).to.deep.equal(latest);
    expect(await userSeqs()).to.deep.equal([s1, s2]);
    expect((await view()).messageCount).to.be.below(fullCount);
    await redo();
    const back = await view();
    expect(back.messages.filter((m: Json) => m.role === "user").map((m: Json) => m.content)).to.deep.equal([
      "turn one",
      "turn two",
      "turn three",
    ]);
    expect(back.messageCount).to.equal(fullCount);

    // both (the default), to the first message: nothing of the three turns is left.
    const both = await rewind(s1);
    expect(both.body).to.include({ restore: "both", filesRestored: true });
    expect(files()).to.deep.equal({ "keep.txt": "untouched\n" });
    expect((await view()).messages).to.deep.equal([]);
    await redo();
    expect(files()).to.deep.equal(latest);
    const reseqs = await userSeqs();
    expect(reseqs).to.have.length(3);
    // The turns' checkpoints came back with the messages: a code rewind to the (renumbered) second turn works.
    expect((await rewind(reseqs[1], "code")).status).to.equal(200);
    expect(files()).to.deep.equal({ "a.txt": "a1\n", "b.txt": "b1\n", "keep.txt": "untouched\n" });
    // A new turn ends what /redo could undo.
    await agentTurn("turn four", [write("e.txt", "e\n")]);
    expect((await redo()).body.data).to.deep.equal({ redone: false });
  });

  it("answers bad input with 404, 400 and 409 and changes nothing", async () => {
    await setUp();
    const [s1, s2] = await threeTurns();
    const assistant = (await view()).messages.find((m: Json) => m.role === "assistant" && m.seq > (s1 as number));
    const before = files();
    const countBefore = (await view()).messageCount;
    expect((await rewind(99_999, "both")).status).to.equal(404);
    expect((await d.get(`/sessions/${id}/rewind?messageSeq=99999`)).status).to.equal(404);
    const notUser = await rewind(assistant.seq, "both");
    expect(notUser.status).to.equal(400);
    expect(notUser.body.error).to.match(/not a user message/);
    expect((await rewind(s2, "everything")).status).to.equal(400);
    expect((await rewind("two", "code")).status).to.equal(400);
    expect((await d.post(`/sessions/nope/rewind`, { messageSeq: s2 })).status).to.equal(404);
    expect((await d.post<Json>(`/sessions/${id}/command`, { command: "/rewind 2 sideways" })).status).to.equal(400);
    // While a turn runs: 409.
    let release!: () => void;
    fake.script(turn({ content: "busy" }, { waitFor: new Promise<void>((r) => (release = r)) }));
    await d.post(`/sessions/${id}/chat`, { text: "long one" });
    await sse.waitFor((f) => f.json?.type === "token");
    const running = await rewind(s2, "both");
    expect(running.status).to.equal(409);
    release();
    await sse.waitFor(() => sse.ofType("end").length === 4, 20_000);
    expect(files()).to.deep.equal(before);
    expect((await view()).messageCount).to.be.above(countBefore);
    // The picker's list over the command API.
    const picker = await d.post<Json>(`/sessions/${id}/command`, { command: "/rewind" });
    expect(picker.body.data.choices.map((c: Json) => c.text)).to.deep.equal([
      "turn one",
      "turn two",
      "turn three",
      "long one",
    ]);
  });

  it("refuses a code rewind whose checkpoint was pruned, with a clear error, and still rewinds the conversation", async () => {
    await setUp({ pluginOptions: { commands: { checkpoints: { keep: 1 } } } });
    await agentTurn("first", [write("a.txt", "1\n")]);
    await agentTurn("second", [write("a.txt", "2\n")]);
    const [s1] = await userSeqs();
    const before = files();
    for (const restore of ["code", "both"]) {
      const res = await rewind(s1, restore);
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal("checkpoint_pruned");
      expect(res.body.error).to.match(/no longer kept/);
    }
    expect((await d.get<Json>(`/sessions/${id}/rewind?messageSeq=${s1}`)).body).to.include({ available: false });
    expect(files()).to.deep.equal(before);
    expect(await userSeqs()).to.have.length(2);
    expect((await rewind(s1, "conversation")).status).to.equal(200);
    expect((await view()).messages).to.deep.equal([]);
    expect(existsSync(join(dir, "a.txt"))).to.equal(true);
  });
});
