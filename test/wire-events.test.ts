import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { expect } from "chai";
import { SESSION_EVENT_TYPES } from "../core/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, fail, startFakeProvider, text, tools } from "../testing/fake-provider.js";
import { SseClient, type SseFrame } from "../testing/sse.js";

const root = join(fileURLToPath(import.meta.url), "..", "..", "..");
const doc = JSON.parse(readFileSync(join(root, "docs", "openapi", "v1.json"), "utf8"));

/** The OpenAPI document's `SessionEvent` schema (oneOf the per-type components), compiled with Ajv. */
function compileSessionEvent(): ValidateFunction {
  // biome-ignore lint/suspicious/noExplicitAny: ajv-formats' CJS default export
  const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (a: Ajv) => Ajv;
  // Not strict: the document carries OpenAPI keywords (`discriminator`) Ajv does not know; `oneOf` is what it checks.
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  ajv.addSchema({ $id: "agentd-openapi", components: doc.components });
  const validate = ajv.getSchema("agentd-openapi#/components/schemas/SessionEvent");
  if (!validate) throw new Error("SessionEvent is missing from the OpenAPI document's components");
  return validate;
}

const validate = compileSessionEvent();
const KNOWN = new Set<string>(SESSION_EVENT_TYPES);
/**
 * Types a test plugin's tool emits through `ctx.emit` (tool progress events are the plugin's own; only the built-in
 * ones are part of the union). Everything else on the wire must be a `SessionEvent`.
 */
const TEST_PLUGIN_TYPES = new Set(["probe_started"]);
const EVENT_STREAM = /\/api\/v1\/sessions\/(events|[^/]+\/events)(\?|$)/;

function problems(frame: SseFrame): string | undefined {
  const type = frame.json?.type;
  if (typeof type !== "string") return `not a JSON event: ${frame.data.slice(0, 200)}`;
  if (TEST_PLUGIN_TYPES.has(type)) return undefined;
  if (!KNOWN.has(type)) return `unknown event type "${type}"`;
  if (validate(frame.json)) return undefined;
  // oneOf reports every branch; the errors of the branch with the frame's type are the useful ones.
  const branch = String(doc.components.schemas.SessionEvent.discriminator.mapping[type]).replace("#", "");
  const mine = (validate.errors ?? []).filter((e) => e.schemaPath.startsWith(`#${branch}`));
  return `${type}: ${JSON.stringify(mine.length ? mine : validate.errors).slice(0, 600)} in ${frame.data.slice(0, 400)}`;
}

/*
 * Root-level hooks: every frame any SSE client of any black-box test receives, in the whole run, is checked against
 * the OpenAPI document's schema, and its type must be one the union knows.
 */
const violations: string[] = [];
const seenTypes = new Set<string>();
let untap: (() => void) | undefined;
before(() => {
  untap = SseClient.tap((frame, url) => {
    if (!EVENT_STREAM.test(url)) return;
    if (typeof frame.json?.type === "string") seenTypes.add(frame.json.type);
    const p = problems(frame);
    if (p && violations.length < 50) violations.push(`${p} (on ${url.replace(/\?.*/, "")})`);
  });
});
after(() => {
  untap?.();
  expect(violations.join("\n"), "SSE frames that do not match components.schemas.SessionEvent").to.equal("");
});

describe("wire events (SessionEvent)", function () {
  this.timeout(30_000);

  it("describes every event type in the OpenAPI document, as a oneOf discriminated by type, from both streams", () => {
    const schema = doc.components.schemas.SessionEvent;
    expect(schema.discriminator.propertyName).to.equal("type");
    const mapped = Object.keys(schema.discriminator.mapping).sort();
    expect(mapped).to.deep.equal([...SESSION_EVENT_TYPES].sort());
    expect(schema.oneOf).to.have.length(SESSION_EVENT_TYPES.length);
    for (const [type, ref] of Object.entries<string>(schema.discriminator.mapping)) {
      const name = ref.replace("#/components/schemas/", "");
      expect(schema.oneOf).to.deep.include({ $ref: ref });
      expect(doc.components.schemas[name].properties.type.const, name).to.equal(type);
    }
    for (const path of ["/api/v1/sessions/events", "/api/v1/sessions/{id}/events"]) {
      const ok = doc.paths[path].get.responses["200"];
      expect(ok.content["text/event-stream"].schema).to.deep.equal({ $ref: "#/components/schemas/SessionEvent" });
      expect(ok.description).to.contain("SessionEvent");
    }
  });

  it("rejects a frame that does not fit its type's schema and a type the union does not know", () => {
    expect(problems({ data: "", json: { type: "token", text: "hi", sessionId: "s", seq: 1 } })).to.equal(undefined);
    expect(problems({ data: "", json: { type: "token", sessionId: "s", seq: 1 } })).to.match(/^token:/);
    expect(problems({ data: "", json: { type: "end", reason: "finished" } })).to.match(/^end:/);
    expect(problems({ data: "", json: { type: "made_up" } })).to.match(/unknown event type "made_up"/);
  });

  it("lists every event type in the README's events table", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const table = readme.slice(readme.indexOf("### Events"), readme.indexOf("### Client contract details"));
    for (const type of SESSION_EVENT_TYPES) expect(table, type).to.contain(`\`${type}\``);
  });

  describe("a representative session, end to end", () => {
    let fake: FakeProvider;
    let d: TestDaemon;

    before(async () => {
      fake = await startFakeProvider();
      d = await startTestDaemon({
        config: { provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" } },
      });
    });
    after(async () => {
      await d.cleanup();
      await fake.close();
    });

    it("streams only frames that match their schema: a tool turn, a failed turn, a command, a deletion", async () => {
      const feed = await d.sse("/sessions/events");
      await feed.waitForType("connected");
      const id = await d.createSession({ cwd: d.home });
      const sse = await d.sse(`/sessions/${id}/events`);
      await sse.waitForType("status");

      fake.script(
        tools([{ name: "ls", args: { path: "." } }], { before: [{ content: "looking" }] }),
        text("done", " here"),
      );
      expect((await d.post(`/sessions/${id}/chat`, { text: "list the files" })).status).to.equal(202);
      await sse.waitFor((f) => f.json?.type === "end");
      await sse.waitForType("session_end");

      fake.script(fail(400, { body: { error: { message: "bad request" } } }));
      const before = sse.frames.length;
      expect((await d.post(`/sessions/${id}/chat`, { text: "fail please" })).status).to.equal(202);
      await sse.waitFor((f) => f.json?.type === "end", 10_000, before);

      expect((await d.post(`/sessions/${id}/command`, { command: "/clear" })).status).to.equal(200);
      await sse.waitForType("context_cleaned");

      const del = await d.delete(`/sessions/${id}/permanent`);
      expect(del.status, del.text).to.equal(200);
      await sse.waitForType("session_closed");
      await feed.waitFor((f) => f.json?.type === "session_deleted" && f.json.sessionId === id);

      const types = new Set([...sse.frames, ...feed.frames].map((f) => f.json?.type));
      for (const t of [
        "status",
        "user_message",
        "token",
        "tool_start",
        "tool_end",
        "turn_end",
        "assistant_message",
        "turn_meta",
        "end",
        "session_end",
        "error",
        "context_cleaned",
        "session_closed",
        "session_update",
        "connected",
        "session_created",
        "session_deleted",
      ])
        expect(types, t).to.include(t);
      const bad = [...sse.frames, ...feed.frames].map(problems).filter(Boolean);
      expect(bad).to.deep.equal([]);
      sse.close();
      feed.close();
    });
  });
});
