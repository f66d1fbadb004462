import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools, turn } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";
import { gatedTool } from "./support/gated-tool.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.js", import.meta.url));

type Req = { messages: Array<{ role: string; content: unknown; tool_call_id?: string }> };

describe("agent interactions: confirmations, questions, todos, plans, sub-agents, MCP", function () {
  this.timeout(30_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let sse: SseClient;
  let id: string;
  const ran: string[] = [];

  async function boot(extraConfig: Record<string, unknown> = {}) {
    d = await startTestDaemon({
      config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" }, ...extraConfig },
      builtins: [...builtinPlugins, gatedTool(ran)].map(builtinSource),
    });
    id = await d.createSession({ cwd: d.home });
    sse = await d.sse(`/sessions/${id}/events`);
  }

  beforeEach(async () => {
    ran.length = 0;
    fake = await startFakeProvider();
  });
  afterEach(async () => {
    sse?.close();
    await d?.cleanup();
    await fake.close();
  });

  const chat = (t: string) => d.post(`/sessions/${id}/chat`, { text: t });
  const waitEnd = (n = 1) => sse.waitFor(() => sse.ofType("end").length >= n, 15_000);

  describe("dangerous-command confirmation", () => {
    it("blocks the turn until allowed; pending survives a reconnect; wrong and stale ids get 404/409", async () => {
      await boot();
      fake.script(tools([{ name: "risky", args: { what: "rm -rf build" }, id: "r1" }]), text("done"));
      await chat("clean up");
      const ask = (await sse.waitForType("bash_confirm")).json;
      expect(ask).to.include({ tool: "risky", command: "rm -rf build", reason: "test gate" });
      expect(ask.id).to.be.a("string");
      // Visible in GET /sessions/{id} and in the first frame of a reconnecting client.
      const view = await d.get(`/sessions/${id}`);
      expect(view.body.status).to.equal("running");
      expect(JSON.stringify(view.body)).to.include(ask.id);
      sse.close();
      sse = await d.sse(`/sessions/${id}/events`);
      await sse.waitFor(() => sse.frames.length > 0);
      expect(JSON.stringify(sse.frames[0]?.json)).to.include(ask.id);
      expect(ran).to.deep.equal([]);
      expect((await d.post(`/sessions/${id}/bash-confirm`, { id: "c_unknown", allow: true })).status).to.equal(404);
      expect((await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id })).status).to.equal(400);
      const ok = await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: true });
      expect(ok.status).to.equal(202);
      await waitEnd();
      expect(ran).to.deep.equal(["rm -rf build"]);
      expect((await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: false })).status).to.equal(409);
      expect(sse.ofType("tool_end")[0]?.json.status).to.equal("ok");
    });

    it("a denial blocks the command and the model hears why", async () => {
      await boot();
      fake.script(tools([{ name: "risky", args: { what: "sudo reboot" }, id: "r1" }]), text("ok, I will not"));
      await chat("reboot");
      const ask = (await sse.waitForType("bash_confirm")).json;
      await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: false });
      await waitEnd();
      expect(ran).to.deep.equal([]);
      expect(sse.ofType("tool_end")[0]?.json.result.error.code).to.equal("permission_denied");
      const back = fake.requests[1] as Req;
      expect(back.messages.find((m) => m.tool_call_id === "r1")?.content).to.match(/denied/);
    });

    it("an unanswered confirmation times out as denied (confirmTimeoutMs)", async () => {
      await boot({ confirmTimeoutMs: 200 });
      fake.script(tools([{ name: "risky", args: { what: "dd of=/dev/sda" }, id: "r1" }]), text("gave up"));
      await chat("wipe");
      const ask = (await sse.waitForType("bash_confirm")).json;
      const resolved = await sse.waitForType("bash_confirm_resolved");
      expect(resolved.json).to.include({ id: ask.id, allowed: false, by: "timeout" });
      await waitEnd();
      expect(ran).to.deep.equal([]);
      expect((await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: true })).status).to.equal(409);
    });

    it("an abort while waiting resolves the confirmation as denied and ends the turn", async () => {
      await boot();
      fake.script(tools([{ name: "risky", args: { what: "x" }, id: "r1" }]));
      await chat("go");
      await sse.waitForType("bash_confirm");
      await d.post(`/sessions/${id}/abort`);
      await waitEnd();
      expect(sse.ofType("end")[0]?.json.reason).to.equal("aborted");
      expect(ran).to.deep.equal([]);
      expect(JSON.stringify((await d.get(`/sessions/${id}`)).body)).to.not.include('pendingConfirmations":[{');
    });
  });

  describe("questions", () => {
    const questions = [
      {
        question: "Which database?",
        options: [
          { label: "Postgres", value: "pg" },
          { label: "SQLite", value: "sqlite" },
        ],
      },
      {
        question: "Which extras?",
        multiSelect: true,
        options: [
          { label: "Auth", value: "auth" },
          { label: "Cache", value: "cache" },
          { label: "Queue", value: "queue" },
        ],
      },
    ];

    it("waits for POST question; validates the answers (400) and refuses when none is pending (409)", async () => {
      await boot();
      expect((await d.post(`/sessions/${id}/question`, { values: ["pg"] })).status).to.equal(409);
      fake.script(tools([{ name: "question", args: { questions }, id: "q1" }]), text("noted"));
      await chat("set it up");
      const state = await sse.waitFor((f) => f.json?.type === "decision_state" && f.json.question);
      expect(state.json.question.questions).to.have.length(2);
      expect(JSON.stringify((await d.get(`/sessions/${id}`)).body)).to.include("Which database?");
      expect((await d.post(`/sessions/${id}/question`, { values: ["pg"] })).status).to.equal(400); // too few
      expect((await d.post(`/sessions/${id}/question`, { values: ["pg", ["auth", "nosql"]] })).status).to.equal(400); // not an option
      expect((await d.post(`/sessions/${id}/question`, { values: [["pg"], ["auth"]] })).status).to.equal(400); // single as list
      expect((await d.post(`/sessions/${id}/question`, { values: ["", ["auth"]] })).status).to.equal(400); // empty
      expect((await d.post(`/sessions/${id}/question`, {})).status).to.equal(400);
      const ok = await d.post(`/sessions/${id}/question`, { values: ["sqlite", ["auth", "queue"]] });
      expect(ok.status).to.equal(202);
      await waitEnd();
      const back = fake.requests[1] as Req;
      const answer = String(back.messages.find((m) => m.tool_call_id === "q1")?.content);
      expect(answer).to.include("SQLite").and.include("Auth, Queue");
      expect((await d.post(`/sessions/${id}/question`, { values: ["pg", ["auth"]] })).status).to.equal(409);
    });

    it("rejects malformed question calls as invalid arguments the model can fix", async () => {
      await boot();
      const bad = [{ question: "One option only?", options: [{ label: "A", value: "a" }] }];
      fake.script(tools([{ name: "question", args: { questions: bad }, id: "q1" }]), text("fixed"));
      await chat("ask me");
      await waitEnd();
      expect(sse.ofType("tool_end")[0]?.json.result.error.code).to.equal("invalid_arguments");
    });
  });

  describe("todos", () => {
    it("emits the todo list and keeps the turn going while items are open, bounded by 3 nudges", async () => {
      await boot();
      const open = {
        todos: [
          { content: "write tests", status: "in_progress" },
          { content: "docs", status: "pending" },
        ],
      };
      fake.script(
        tools([{ name: "todo_write", args: open, id: "t1" }]),
        text("I am done"),
        text("really done"),
        text("still"),
        text("stop"),
      );
      await chat("work");
      await waitEnd();
      expect(sse.ofType("todos_updated")[0]?.json.todos).to.have.length(2);
      const gates = sse.ofType("todo_gate");
      expect(gates.map((g) => g.json.nudge)).to.deep.equal([1, 2, 3]);
      expect(fake.requests).to.have.length(5);
      const nudged = fake.requests[2] as Req;
      expect(JSON.stringify(nudged.messages.at(-1))).to.include("write tests");
      expect(JSON.stringify(sse.ofType("notice"))).to.match(/open todo/);
      expect(sse.ofType("end")).to.have.length(1);
      // The reminders are visible as warnings, not as the user's words.
      const view = await d.get(`/sessions/${id}`);
      expect(view.body.messages.filter((m: { role: string }) => m.role === "user")).to.have.length(1);
      expect(view.body.messages.filter((m: { role: string }) => m.role === "warning")).to.have.length(3);
    });

    it("lets the turn finish once the todos are completed", async () => {
      await boot();
      fake.script(
        tools([{ name: "todo_write", args: { todos: [{ content: "a", status: "in_progress" }] } }]),
        tools([{ name: "todo_write", args: { todos: [{ content: "a", status: "completed" }] } }]),
        text("finished"),
      );
      await chat("work");
      await waitEnd();
      expect(sse.ofType("todo_gate")).to.have.length(0);
      expect(fake.requests).to.have.length(3);
    });
  });

  describe("plan mode", () => {
    it("switches modes (409 while running), hides build tools, ends the turn at plan_done and turns open steps into todos", async () => {
      await boot();
      expect((await d.post(`/sessions/${id}/mode`, { mode: "nope" })).status).to.equal(400);
      expect((await d.post(`/sessions/${id}/plan-transition`, { kind: "done" })).status).to.equal(409);
      const m = await d.post(`/sessions/${id}/mode`, { mode: "plan" });
      expect(m.status).to.equal(200);
      expect(m.body).to.deep.include({ ok: true, mode: "plan" });
      const plans = join(d.home, ".agentd", "plans", id);
      mkdirSync(plans, { recursive: true });
      writeFileSync(
        join(plans, "plan.md"),
        "# Plan\n\n## Steps\n- [ ] add the parser\n- [x] read the code\n- [ ] write tests\n",
      );
      fake.script(
        tools([{ name: "plan_done", args: { summary: "parser plan" }, id: "p1" }]),
        text("must not be requested"),
      );
      await chat("plan it");
      await waitEnd();
      const planReq = fake.requests[0] as { tools?: Array<{ function: { name: string } }> };
      const offered = (planReq.tools ?? []).map((t) => t.function.name);
      expect(offered).to.include("plan_done");
      expect(offered).to.not.include("todo_write");
      expect(fake.requests).to.have.length(1); // plan_done ended the turn
      expect(JSON.stringify((await d.get(`/sessions/${id}`)).body)).to.include("planTransition");
      const done = await d.post(`/sessions/${id}/plan-transition`, { kind: "done" });
      expect(done.status).to.equal(202);
      const todos = (await sse.waitForType("todos_updated")).json.todos;
      expect(todos.map((t: { content: string }) => t.content)).to.deep.equal(["add the parser", "write tests"]);
      expect((await d.post(`/sessions/${id}/plan-transition`, { kind: "done" })).status).to.equal(409);
      expect((await d.post(`/sessions/${id}/plan-transition`, { kind: "other" })).status).to.equal(400);
      expect((await d.post(`/sessions/${id}/mode`, { mode: "build" })).body.mode).to.equal("build");
      // 409 while a turn runs.
      let release!: () => void;
      fake.script(turn({ content: "x" }, { waitFor: new Promise<void>((r) => (release = r)) }));
      const from = sse.frames.length;
      await chat("build it");
      await sse.waitFor((f) => f.json?.type === "status" && f.json.status === "running", 5000, from);
      expect((await d.post(`/sessions/${id}/mode`, { mode: "plan" })).status).to.equal(409);
      expect((await d.post(`/sessions/${id}/clean-context`)).status).to.equal(409);
      release();
      await waitEnd(2);
    });

    it("clean-context keeps the visible history and starts the next call from a clean slate", async () => {
      await boot();
      fake.script(text("first answer"));
      await chat("remember 42");
      await waitEnd();
      const res = await d.post(`/sessions/${id}/clean-context`);
      expect(res.status).to.equal(200);
      expect(res.body.ok).to.equal(true);
      fake.script(text("fresh"));
      await chat("what now?");
      await waitEnd(2);
      const last = fake.requests[1] as Req;
      expect(JSON.stringify(last.messages)).to.not.include("remember 42");
      const view = await d.get(`/sessions/${id}`);
      expect(view.body.messages.map((x: { content: string }) => x.content)).to.include.members([
        "remember 42",
        "first answer",
        "fresh",
      ]);
      expect((await d.post("/sessions/nope/clean-context")).status).to.equal(404);
    });
  });

  describe("sub-agents", () => {
    it("runs a child loop with read-only tools and returns its report as the tool result, accounting its usage", async () => {
      await boot();
      const isChild = (b: object) => String((b as Req).messages[0]?.content).includes("sub-agent");
      fake.scriptFor(
        isChild,
        turn({ content: "Found it in src/a.ts:10." }, { usage: { prompt_tokens: 50, completion_tokens: 7 } }),
      );
      fake.script(
        tools([{ name: "task", args: { description: "find the bug", prompt: "Where is the bug?" }, id: "k1" }]),
        text("thanks"),
      );
      await chat("delegate");
      await waitEnd();
      const child = fake.requests.find(isChild) as { tools?: Array<{ function: { name: string } }> };
      const childTools = (child.tools ?? []).map((t) => t.function.name);
      expect(childTools).to.not.include("task");
      expect(childTools).to.not.include("risky");
      expect(childTools).to.not.include("todo_write");
      const parent = fake.requests.at(-1) as Req;
      expect(parent.messages.find((m) => m.tool_call_id === "k1")?.content).to.include("src/a.ts:10");
      const view = await d.get(`/sessions/${id}`);
      expect(JSON.stringify(view.body)).to.include("subagentTokens");
      expect(JSON.stringify(view.body.usage ?? view.body)).to.match(/"subagentTokens":57/);
    });
  });

  describe("MCP", () => {
    it("calls an MCP tool through a model turn (stdio server from the config's mcpServers)", async () => {
      await boot({ mcpServers: { fx: { command: process.execPath, args: [FIXTURE] } } });
      for (let i = 0; i < 200; i++) {
        const servers = (await d.get("/mcp/servers")).body as Array<{ name: string; state?: string; status?: string }>;
        if (JSON.stringify(servers).includes("mcp_fx_echo")) break;
        // The server connects in the background (its own process); poll its status like a client would.
        await new Promise((r) => setTimeout(r, 50));
      }
      fake.script(tools([{ name: "mcp_fx_echo", args: { text: "ping" }, id: "m1" }]), text("got it"));
      await chat("use mcp");
      await waitEnd();
      const offered = ((fake.requests[0] as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map(
        (t) => t.function.name,
      );
      expect(offered).to.include("mcp_fx_echo");
      const end = sse.ofType("tool_end")[0]?.json;
      expect(end).to.include({ name: "mcp_fx_echo", status: "ok" });
      expect(end.result.content).to.include("ping");
      expect(existsSync(FIXTURE)).to.equal(true);
    });
  });
});
