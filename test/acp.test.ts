import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { methods, type RequestError } from "@agentclientprotocol/sdk";
import { expect } from "chai";
import { AcpClientHarness } from "./support/acp.js";
import { makeTempHome, startTestDaemon, type TestDaemon } from "./support/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools, turn } from "./support/fake-provider.js";

const MAIN = fileURLToPath(new URL("../host/main.js", import.meta.url));

/** `agentd acp` black-box: a child process driven by the ACP SDK's client side, against the real daemon. */
describe("agentd acp (Agent Client Protocol)", function () {
  this.timeout(40_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let cwd: string;
  let acp: AcpClientHarness | undefined;
  let release: () => void = () => {};

  beforeEach(async () => {
    fake = await startFakeProvider();
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "agentd-acp-")));
    d = await startTestDaemon({ config: { provider: { baseURL: fake.url, apiKey: "k", model: "m" } } });
  });
  afterEach(async () => {
    release();
    await acp?.close();
    acp = undefined;
    await d.cleanup();
    await fake.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  const start = async (handlers: Parameters<typeof AcpClientHarness.start>[1] = {}, caps = {}) => {
    acp = AcpClientHarness.start(d.home, handlers);
    const init = await acp.initialize(caps);
    return { acp, init };
  };

  it("initializes with agent info and capabilities, and a new session is an ordinary agentd session", async () => {
    const { acp, init } = await start();
    expect(init.protocolVersion).to.equal(1);
    expect(init.agentInfo?.name).to.equal("agentd");
    expect(init.agentCapabilities?.loadSession).to.equal(true);
    expect(init.agentCapabilities?.promptCapabilities).to.include({ image: true, embeddedContext: true });
    const res = await acp.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
    expect(res.modes?.currentModeId).to.equal("build");
    expect(res.modes?.availableModes.map((m) => m.id)).to.have.members(["build", "plan"]);
    const s = await d.get(`/sessions/${res.sessionId}`);
    expect(s.status).to.equal(200);
    expect(s.body.cwd).to.equal(cwd);
    const cmds = await acp.waitForUpdate((u) => u.update.sessionUpdate === "available_commands_update");
    const names = cmds.update.sessionUpdate === "available_commands_update" ? cmds.update.availableCommands : [];
    expect(names.map((c) => c.name)).to.include.members(["undo", "plan", "build"]);

    const bad = await acp.agent.request(methods.agent.session.new, { cwd: "not/absolute", mcpServers: [] }).then(
      () => undefined,
      (err: RequestError) => err,
    );
    expect(bad?.code).to.equal(-32602);
    expect(bad?.message).to.match(/cwd|director/i);
  });

  it("streams a prompt's chunks and answers end_turn; the turn is in the daemon's history", async () => {
    const { acp } = await start();
    const id = await acp.newSession(cwd);
    fake.script(
      turn({ reasoning: "thinking it over" }, { content: "Hello " }, { content: "from " }, { content: "agentd" }),
    );
    const res = await acp.prompt(id, "say hello");
    expect(res.stopReason).to.equal("end_turn");
    expect(acp.text(id)).to.equal("Hello from agentd");
    expect(acp.text(id, "agent_thought_chunk")).to.equal("thinking it over");
    // One chunk per token event: the provider's chunks that reach the daemon in one read travel together.
    expect(acp.of(id, "agent_message_chunk").length).to.be.within(1, 3);
    const s = await d.get(`/sessions/${id}`);
    expect(s.body.messages.map((m: { content: string }) => m.content)).to.deep.equal([
      "say hello",
      "Hello from agentd",
    ]);

    // Images and embedded context reach the model with the text.
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
    fake.script(text("seen"));
    const withContext = await acp.agent.request(methods.agent.session.prompt, {
      sessionId: id,
      prompt: [
        { type: "text", text: "what is this?" },
        { type: "image", mimeType: "image/png", data: png },
        { type: "resource", resource: { uri: "file:///w/a.ts", text: "const a = 1;" } },
      ],
    });
    expect(withContext.stopReason).to.equal("end_turn");
    const sent = JSON.stringify(fake.requests[1]?.messages);
    expect(sent).to.include(`data:image/png;base64,${png}`).and.include("const a = 1;").and.include("file:///w/a.ts");
  });

  it("runs a prompt that is a known slash command as that command and shows its reply", async () => {
    const { acp } = await start();
    const id = await acp.newSession(cwd);
    expect((await acp.prompt(id, "/turn-cap 42")).stopReason).to.equal("end_turn");
    expect(acp.text(id)).to.include("42");
    expect(fake.requests).to.have.length(0);
    fake.script(text("plain"));
    expect((await acp.prompt(id, "/not-a-command please")).stopReason).to.equal("end_turn");
    expect(JSON.stringify(fake.requests[0]?.messages)).to.include("/not-a-command please");
    expect(acp.text(id)).to.include("plain");

    // A command that starts a turn streams it, and the prompt ends with that turn.
    fake.script(text("goal reached"));
    expect((await acp.prompt(id, "/goal 3 tidy the repository")).stopReason).to.equal("end_turn");
    expect(acp.text(id)).to.include("Working toward the goal").and.include("goal reached");
    expect((await d.get(`/sessions/${id}`)).body.status).to.equal("idle");
  });

  it("reports a tool call, its result and an edit as a diff", async () => {
    writeFileSync(join(cwd, "notes.txt"), "first line\nsecond line\n");
    const { acp } = await start();
    const id = await acp.newSession(cwd);
    fake.script(
      tools([{ name: "read", args: { path: "notes.txt" }, id: "r1" }]),
      tools([{ name: "edit", args: { filePath: "notes.txt", oldString: "second", newString: "2nd" }, id: "e1" }]),
      text("done"),
    );
    expect((await acp.prompt(id, "read and fix")).stopReason).to.equal("end_turn");
    const call = acp.of(id, "tool_call").find((u) => u.toolCallId === "r1");
    expect(call).to.include({ title: "Read notes.txt", kind: "read", status: "in_progress" });
    expect(call?.locations).to.deep.equal([{ path: join(cwd, "notes.txt") }]);
    const done = acp.of(id, "tool_call_update").find((u) => u.toolCallId === "r1" && u.status);
    expect(done?.status).to.equal("completed");
    expect(JSON.stringify(done?.content)).to.include("second line");
    const edit = acp.of(id, "tool_call").find((u) => u.toolCallId === "e1");
    expect(edit?.kind).to.equal("edit");
    expect(edit?.content).to.deep.include({
      type: "diff",
      path: join(cwd, "notes.txt"),
      oldText: "second",
      newText: "2nd",
    });
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).to.equal("first line\n2nd line\n");
  });

  it("asks permission for a dangerous command: rejected never runs, allowed runs once", async () => {
    const answers = ["reject", "allow"];
    const { acp } = await start({
      permission: () => ({ outcome: { outcome: "selected", optionId: answers.shift() ?? "reject" } }),
    });
    const id = await acp.newSession(cwd);
    const marker = join(cwd, "gone");
    fake.script(
      tools([{ name: "bash", args: { command: `rm -rf ./build && touch ${marker}` }, id: "b1" }]),
      text("ok"),
    );
    expect((await acp.prompt(id, "clean")).stopReason).to.equal("end_turn");
    expect(acp.permissions).to.have.length(1);
    const asked = acp.permissions[0];
    expect(asked?.toolCall.toolCallId).to.equal("b1");
    expect(asked?.options.map((o) => o.kind)).to.deep.equal(["allow_once", "allow_always", "reject_once"]);
    expect(asked?.options[1]?.name).to.include("rm -rf ./build");
    expect(existsSync(marker)).to.equal(false);
    const failed = acp.of(id, "tool_call_update").find((u) => u.toolCallId === "b1" && u.status);
    expect(failed?.status).to.equal("failed");

    fake.script(
      tools([{ name: "bash", args: { command: `rm -rf ./build && touch ${marker}` }, id: "b2" }]),
      text("ok"),
    );
    expect((await acp.prompt(id, "clean, really")).stopReason).to.equal("end_turn");
    expect(acp.permissions).to.have.length(2);
    expect(existsSync(marker)).to.equal(true);
    const ran = acp.of(id, "tool_call_update").find((u) => u.toolCallId === "b2" && u.status);
    expect(ran?.status).to.equal("completed");
  });

  it("'allow always' becomes a project rule: the command is not asked again", async () => {
    const { acp } = await start({
      permission: (req) => ({
        outcome: { outcome: "selected", optionId: req.options.find((o) => o.kind === "allow_always")?.optionId ?? "" },
      }),
    });
    const id = await acp.newSession(cwd);
    for (const callId of ["b1", "b2"]) {
      mkdirSync(join(cwd, "build"), { recursive: true });
      fake.script(tools([{ name: "bash", args: { command: "rm -rf ./build" }, id: callId }]), text("ok"));
      expect((await acp.prompt(id, "clean")).stopReason).to.equal("end_turn");
      expect(existsSync(join(cwd, "build"))).to.equal(false);
    }
    expect(acp.permissions).to.have.length(1);
    const rules = (await d.get("/permissions/rules")).body.rules;
    expect(rules.map((r: { scope: string; pattern: string }) => [r.scope, r.pattern])).to.deep.equal([
      ["project", "rm -rf ./build"],
    ]);
  });

  it("withdraws the editor's permission dialog when the command is decided elsewhere", async () => {
    let withdrawn = false;
    const { acp } = await start({
      permission: (_req, signal) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () => {
            withdrawn = true;
            resolve({ outcome: { outcome: "cancelled" } });
          });
        }),
    });
    const id = await acp.newSession(cwd);
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "bash", args: { command: "rm -rf ./build" }, id: "b1" }]), text("ok"));
    const asked = acp.nextPermission();
    const pending = acp.prompt(id, "clean");
    const ask = (await sse.waitForType("bash_confirm")).json;
    await asked;
    expect((await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: true })).status).to.equal(202);
    expect((await pending).stopReason).to.equal("end_turn");
    sse.close();
    expect(acp.of(id, "tool_call_update").find((u) => u.toolCallId === "b1" && u.status)?.status).to.equal("completed");
    expect(withdrawn).to.equal(true);
  });

  it("cancels a prompt mid-stream: stopReason cancelled, the partial answer is kept", async () => {
    const { acp } = await start();
    const id = await acp.newSession(cwd);
    const hold = new Promise<void>((r) => (release = r));
    fake.script(turn({ content: "partial " }, { waitFor: hold }, { content: "never" }));
    const pending = acp.prompt(id, "write a lot");
    await acp.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
    await acp.agent.notify(methods.agent.session.cancel, { sessionId: id });
    expect((await pending).stopReason).to.equal("cancelled");
    expect(acp.text(id)).to.equal("partial ");
    const s = await d.get(`/sessions/${id}`);
    expect(s.body.status).to.equal("idle");
  });

  it("loads an earlier session: the history is replayed before the answer, and the session goes on", async () => {
    const id = await d.createSession({ cwd });
    const sse = await d.sse(`/sessions/${id}/events`);
    fake.script(tools([{ name: "ls", args: {}, id: "l1" }]), text("Here are the files."));
    await d.post(`/sessions/${id}/chat`, { text: "list the files" });
    await sse.waitFor((f) => f.json?.type === "end", 20_000);
    sse.close();

    const { acp } = await start();
    const res = await acp.agent.request(methods.agent.session.load, { sessionId: id, cwd, mcpServers: [] });
    expect(res.modes?.currentModeId).to.equal("build");
    expect(acp.text(id, "user_message_chunk")).to.equal("list the files");
    expect(acp.text(id)).to.equal("Here are the files.");
    const ls = acp.of(id, "tool_call").find((u) => u.toolCallId === "l1");
    expect(ls).to.include({ kind: "search", status: "completed" });

    fake.script(text("still here"));
    expect((await acp.prompt(id, "and now?")).stopReason).to.equal("end_turn");
    expect(acp.text(id)).to.equal("Here are the files.still here");

    const missing = await acp.agent
      .request(methods.agent.session.load, { sessionId: "no-such-session", cwd, mcpServers: [] })
      .then(
        () => undefined,
        (err: RequestError) => err,
      );
    expect(missing?.code).to.equal(-32002);
  });

  it("switches modes with session/set_mode and reports mode changes made elsewhere", async () => {
    const { acp } = await start();
    const id = await acp.newSession(cwd);
    await acp.agent.request(methods.agent.session.setMode, { sessionId: id, modeId: "plan" });
    expect((await d.get(`/sessions/${id}`)).body.mode).to.equal("plan");
    const bad = await acp.agent.request(methods.agent.session.setMode, { sessionId: id, modeId: "yolo" }).then(
      () => undefined,
      (err: RequestError) => err,
    );
    expect(bad?.code).to.equal(-32602);
    await d.post(`/sessions/${id}/mode`, { mode: "build" });
    const change = await acp.waitForUpdate(
      (u) => u.update.sessionUpdate === "current_mode_update" && u.update.currentModeId === "build",
    );
    expect(change.sessionId).to.equal(id);
  });

  it("turns the todo list into a plan, usage into usage_update and the iteration cap into max_turn_requests", async () => {
    await d.cleanup();
    d = await startTestDaemon({
      config: {
        provider: { baseURL: fake.url, apiKey: "k", model: "m" },
        maxTurnIterations: 10,
        contextWindow: 50_000,
      },
    });
    const { acp } = await start();
    const id = await acp.newSession(cwd);
    const todos = [
      { content: "write the parser", status: "completed", priority: "high" },
      { content: "drop the old one", status: "cancelled" },
    ];
    fake.script(
      tools([{ name: "todo_write", args: { todos } }]),
      turn({ content: "planned" }, { usage: { prompt_tokens: 1200, completion_tokens: 34 } }),
    );
    expect((await acp.prompt(id, "plan it")).stopReason).to.equal("end_turn");
    const plan = acp.of(id, "plan").at(-1);
    expect(plan?.entries).to.deep.equal([
      { content: "write the parser", status: "completed", priority: "high" },
      { content: "drop the old one", status: "completed", priority: "medium" },
    ]);

    expect(acp.of(id, "usage_update").at(-1)).to.include({ used: 1234, size: 50_000 });

    fake.script(...Array.from({ length: 10 }, () => tools([{ name: "ls", args: {} }])));
    expect((await acp.prompt(id, "loop")).stopReason).to.equal("max_turn_requests");
  });

  it("starts the home's daemon in the background when none runs", async () => {
    const home = makeTempHome("agentd-acp-home-");
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ provider: { baseURL: fake.url, apiKey: "k", model: "m" } }),
    );
    const own = AcpClientHarness.start(home);
    try {
      await own.initialize({});
      const id = await own.newSession(cwd);
      fake.script(text("from a daemon acp started"));
      expect((await own.prompt(id, "hi")).stopReason).to.equal("end_turn");
      expect(own.text(id)).to.equal("from a daemon acp started");
      await own.close();
      const info = JSON.parse(readFileSync(join(home, "server.json"), "utf8")) as { url: string; token: string };
      // The daemon outlives the editor's agent process, with the session in it.
      const res = await fetch(`${info.url}/api/v1/sessions/${id}`, {
        headers: { authorization: `Bearer ${info.token}` },
      });
      expect(res.status).to.equal(200);
    } finally {
      await own.close();
      await new Promise<void>((resolve) => {
        const stop = spawn(process.execPath, [MAIN, "stop", "--home", home], { stdio: "ignore" });
        stop.once("exit", () => resolve());
      });
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("answers garbage on stdin with JSON-RPC errors and keeps serving", async () => {
    const child = spawn(process.execPath, [MAIN, "acp", "--home", d.home], { stdio: ["pipe", "pipe", "pipe"] });
    const lines: Array<Record<string, unknown>> = [];
    let buf = "";
    let notify: () => void = () => {};
    child.stdout.on("data", (chunk: Buffer) => {
      buf += chunk.toString();
      let nl = buf.indexOf("\n");
      while (nl !== -1) {
        lines.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
      }
      notify();
    });
    const until = (n: number) =>
      new Promise<void>((resolve) => {
        notify = () => {
          if (lines.length >= n) resolve();
        };
        notify();
      });
    child.stdin.write("this is not json\n");
    await until(1);
    child.stdin.write(
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n',
    );
    await until(2);
    child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"prompt":"nope"}}\n');
    child.stdin.write('{"jsonrpc":"2.0","id":3,"method":"no/such/method","params":{}}\n');
    child.stdin.write('[1, 2]\n{"jsonrpc":"2.0","id":4,\n');
    child.stdin.write(
      '{"jsonrpc":"2.0","id":5,"method":"session/set_mode","params":{"sessionId":"x","modeId":"plan"}}\n',
    );
    await until(7);
    const exited = new Promise((r) => child.once("exit", r));
    child.stdin.end();
    expect(await exited).to.equal(0);
    const code = (id: unknown) => (lines.find((l) => l.id === id)?.error as { code: number } | undefined)?.code;
    expect(lines[0]?.error).to.include({ code: -32700 });
    expect(lines.find((l) => l.id === 1)?.result).to.include({ protocolVersion: 1 });
    expect(code(2)).to.equal(-32602);
    expect(code(3)).to.equal(-32601);
    expect(code(5)).to.equal(-32602);
    expect(lines.filter((l) => l.id === null).map((l) => (l.error as { code: number }).code)).to.have.members([
      -32700, -32600, -32700,
    ]);
    expect(lines.every((l) => l.jsonrpc === "2.0")).to.equal(true);
  });
});
