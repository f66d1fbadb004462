import { expect } from "chai";
import { SessionServiceToken } from "../core/session-service.js";
import { SessionStoreToken } from "../core/store.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";

/**
 * GET /sessions/{id} of a long session read whole is read and serialised a page of rows at a time
 * (SessionViews.wholeView): the same answer as the view built at once, whatever falls on a page's edge.
 */
describe("a long session read whole", function () {
  this.timeout(60_000);
  let d: TestDaemon;
  const cwd = process.cwd();
  beforeEach(async () => {
    d = await startTestDaemon();
  });
  afterEach(() => d.cleanup());

  /** Turns of a user message, a tool call, its result and an answer, with the oddities a history holds. */
  async function seed(id: string, turns: number): Promise<void> {
    const store = d.daemon.services.get(SessionStoreToken);
    // Two rows first, so that a call (seq 500) and its result (seq 501) fall on either side of a page's edge.
    await store.appendMessage(id, { role: "user", content: "hello" });
    await store.appendMessage(id, { role: "assistant", content: "hi" });
    for (let t = 0; t < turns; t++) {
      const call = `call-${t}`;
      await store.appendMessage(id, { role: "user", content: `turn ${t}: look at "src/${t}.ts"\n` });
      await store.appendMessage(id, {
        role: "assistant",
        content: "",
        thinking: t % 7 === 0 ? "let me read it" : undefined,
        toolCalls: [{ id: call, name: "read", arguments: JSON.stringify({ path: `src/${t}.ts` }) }],
      });
      // One call is never answered (an interrupted turn): every message after it waits for the end of the read.
      if (t === 170) {
        await store.appendMessage(id, { role: "user", content: "[interrupted]", meta: { reminder: true } });
        continue;
      }
      await store.appendMessage(id, {
        role: "tool",
        toolCallId: call,
        toolName: "read",
        content: t % 11 === 0 ? "ENOENT" : "export const x = 1;\n".repeat(5),
        meta: t % 11 === 0 ? { isError: true } : undefined,
      });
      await store.appendMessage(id, { role: "assistant", content: `Done with src/${t}.ts — ✓` });
    }
  }

  it("answers what the view built at once answers, in pages, for any page edge and unanswered call", async () => {
    const id = await d.createSession({ cwd, title: "long" });
    await seed(id, 300);
    const svc = d.daemon.services.get(SessionServiceToken);
    const whole = await svc.wholeView(id, 100_000);
    expect(whole, "a whole read of a long session is paged").to.not.equal(undefined);
    const atOnce = JSON.parse(JSON.stringify(await svc.view(id, 100_000)));
    expect(atOnce.messages.length).to.be.greaterThan(900);
    // In parts, never joined: the text before the messages, each page (commas between them), the text after.
    const parts = whole as Uint8Array[];
    expect(parts.length).to.be.greaterThan(10);
    const text = Buffer.concat(parts).toString("utf8");
    expect(JSON.parse(text)).to.deep.equal(atOnce);
    const res = await d.get(`/sessions/${id}?turns=100000`);
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.equal("application/json; charset=utf-8");
    expect(res.headers.get("content-length")).to.equal(String(Buffer.byteLength(text)));
    expect(res.body).to.deep.equal(atOnce);
    // A page's edge: the call at seq 500 carries its result from seq 501.
    const edge = atOnce.messages.find((m: { seq?: number }) => m.seq === 500);
    expect(edge.toolCalls[0]).to.include({ status: "ok", result: "export const x = 1;\n".repeat(5) });
  });

  it("builds every other read at once: recent turns, and a short session read whole", async () => {
    const long = await d.createSession({ cwd, title: "long" });
    await seed(long, 300);
    const short = await d.createSession({ cwd, title: "short" });
    await seed(short, 20);
    const svc = d.daemon.services.get(SessionServiceToken);
    expect(await svc.wholeView(long, 10)).to.equal(undefined);
    expect(await svc.wholeView(short, 100_000)).to.equal(undefined);
    const recent = await d.get(`/sessions/${long}?turns=10`);
    expect(recent.body).to.deep.equal(JSON.parse(JSON.stringify(await svc.view(long, 10))));
    expect(recent.body.hasMoreHistory).to.equal(true);
  });
});
