import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { silentLogger } from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import { Checkpoints, DEFAULT_CHECKPOINT_OPTIONS } from "../plugins/commands/index.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools } from "../testing/fake-provider.js";
import { extras, gitIn, type Json } from "./support/commands.js";

describe("commands plugin checkpoint limits", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let project: string;

  before(async () => {
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: {
        provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" },
        pluginOptions: { commands: { checkpoints: { maxFiles: 5 } } },
      },
      builtins: [...builtinPlugins, ...extras].map(builtinSource),
    });
    project = realpathSync(mkdtempSync(join(tmpdir(), "agentd-cmd-big-")));
  });
  after(async () => {
    await d.cleanup();
    await fake.close();
    rmSync(project, { recursive: true, force: true });
  });

  it("skips the snapshot of a directory over the file limit, says so, and still undoes the messages", async () => {
    mkdirSync(join(project, "many"));
    for (let i = 0; i < 8; i++) writeFileSync(join(project, "many", `f${i}.txt`), `${i}`);
    const id = await d.createSession({ cwd: project });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "write", args: { path: "x.txt", content: "x" } }]), text("done"));
    await d.post(`/sessions/${id}/chat`, { text: "go" });
    await sse.waitForType("end", 15_000);
    const notice = sse.ofType("notice").find((f) => /No file checkpoint/.test(f.json.message));
    expect(notice?.json.message).to.include("more than 5 files");
    const res = await d.post<Json>(`/sessions/${id}/command`, { command: "/undo" });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ undone: true, filesRestored: false });
    expect(res.body.result).to.include("files were not restored");
    expect(existsSync(join(project, "x.txt"))).to.equal(true);
    expect((await d.get<Json>(`/sessions/${id}`)).body.messages).to.deep.equal([]);
    sse.close();
  });

  it("rejects invalid plugin options at start", async () => {
    const bad = await startTestDaemon({
      config: { pluginOptions: { commands: { checkpoints: { maxFiles: 0 } } } },
      builtins: [...builtinPlugins, ...extras].map(builtinSource),
    });
    try {
      const status = await bad.get<Json>("/server/status");
      const entry = JSON.stringify(status.body);
      expect(entry).to.match(/pluginOptions\.commands/);
      expect((await bad.get("/commands")).status).to.equal(404);
    } finally {
      await bad.cleanup();
    }
  });
});

describe("Checkpoints (shadow repository)", () => {
  let root: string;
  let work: string;
  const notices: string[] = [];
  const make = (opts: Partial<typeof DEFAULT_CHECKPOINT_OPTIONS> = {}) =>
    new Checkpoints(
      () => join(root, "data"),
      { ...DEFAULT_CHECKPOINT_OPTIONS, ...opts },
      silentLogger,
      (_id, m) => notices.push(m),
    );

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "agentd-cp-")));
    work = join(root, "work");
    mkdirSync(work);
    notices.length = 0;
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("keeps only the newest checkpoints and their refs", async () => {
    const cp = make({ keep: 2 });
    for (const seq of [1, 5, 9]) {
      writeFileSync(join(work, "f.txt"), `v${seq}`);
      cp.begin("s1", seq);
      await cp.snapshot("s1", work);
    }
    const refs = gitIn(work, "--git-dir", join(root, "data", "s1", "repo"), "for-each-ref", "--format=%(refname)");
    expect(refs.trim().split("\n").sort()).to.deep.equal(["refs/checkpoints/5", "refs/checkpoints/9"]);
    expect(cp.last("s1")).to.deep.equal({ seq: 9, hasFiles: true });
    // State survives a restart of the plugin.
    expect(make({ keep: 2 }).last("s1")).to.deep.equal({ seq: 9, hasFiles: true });
  });

  it("leaves files over the size limit out of checkpoints (never restored, never deleted)", async () => {
    const cp = make({ maxFileBytes: 10 });
    writeFileSync(join(work, "small.txt"), "before");
    writeFileSync(join(work, "big.bin"), "a".repeat(100));
    cp.begin("s1", 1);
    await cp.snapshot("s1", work);
    writeFileSync(join(work, "small.txt"), "after");
    writeFileSync(join(work, "big.bin"), "b".repeat(100));
    writeFileSync(join(work, "big2.bin"), "c".repeat(100));
    const out = await cp.undo("s1", work, false);
    expect(out).to.deep.include({ seq: 1, filesRestored: true, created: [], modified: ["small.txt"] });
    expect(readFileSync(join(work, "small.txt"), "utf8")).to.equal("before");
    expect(readFileSync(join(work, "big.bin"), "utf8")).to.equal("b".repeat(100));
    expect(existsSync(join(work, "big2.bin"))).to.equal(true);
    expect(await cp.undo("s1", work, false)).to.equal(undefined);
  });

  it("restores files the turn deleted and tolerates odd file names", async () => {
    const cp = make();
    const odd = "we ird[1]*?.txt ";
    writeFileSync(join(work, odd), "odd");
    mkdirSync(join(work, "dir"));
    writeFileSync(join(work, "dir", "keep.txt"), "keep");
    cp.begin("s1", 3);
    await cp.snapshot("s1", work);
    rmSync(join(work, odd));
    rmSync(join(work, "dir"), { recursive: true });
    const out = await cp.undo("s1", work, false);
    expect(out?.deleted.sort()).to.deep.equal(["dir/keep.txt", odd].sort());
    expect(readFileSync(join(work, odd), "utf8")).to.equal("odd");
    expect(readFileSync(join(work, "dir", "keep.txt"), "utf8")).to.equal("keep");
  });

  it("keeps the state of the 256 sessions used last in memory; an older one reads back from its file", async () => {
    const cp = make({ enabled: false });
    const inner = cp as unknown as { states: { kept: number }; locks: Map<string, unknown> };
    for (let i = 0; i < 300; i++) {
      cp.begin(`s${i}`, i + 1);
      await cp.snapshot(`s${i}`, work);
      await cp.settled();
    }
    expect(inner.states.kept).to.equal(256);
    expect(inner.locks.size).to.equal(0);
    // s0 left memory long ago: its state is its file's.
    expect(cp.last("s0")).to.deep.equal({ seq: 1, hasFiles: false });
    expect(() => cp.checkpointFor("s0", 1)).to.throw(/no checkpoint was taken/);
    cp.begin("s0", 7);
    await cp.settled();
    expect(make({ enabled: false }).last("s0")).to.deep.equal({ seq: 7, hasFiles: false });
    expect(inner.states.kept).to.equal(256);
  });

  it("still tracks turns when file checkpoints are turned off", async () => {
    const cp = make({ enabled: false });
    writeFileSync(join(work, "a.txt"), "before");
    cp.begin("s1", 4);
    await cp.snapshot("s1", work);
    writeFileSync(join(work, "a.txt"), "after");
    const out = await cp.undo("s1", work, false);
    expect(out).to.deep.include({ seq: 4, filesRestored: false });
    expect(out?.note).to.include("turned off");
    expect(readFileSync(join(work, "a.txt"), "utf8")).to.equal("after");
    expect(existsSync(join(root, "data", "s1", "repo"))).to.equal(false);
  });

  it("turns checkpoints off for a directory over the file limit, with one notice", async () => {
    const cp = make({ maxFiles: 3 });
    for (let i = 0; i < 5; i++) writeFileSync(join(work, `f${i}`), "x");
    cp.begin("s1", 1);
    await cp.snapshot("s1", work);
    cp.begin("s1", 2);
    await cp.snapshot("s1", work);
    expect(notices).to.have.length(1);
    expect(notices[0]).to.include("more than 3 files").and.include("off for this session");
    expect(cp.last("s1")).to.deep.equal({ seq: 2, hasFiles: false });
  });
});
