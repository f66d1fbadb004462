import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { ERROR_CODE_LIST, ERROR_CODES, type ErrorCode } from "../core/errors.js";
import { definePlugin, defineRoute, T } from "../core/index.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type FakeProvider, startFakeProvider, text, tools, turn } from "../testing/fake-provider.js";
import type { SseClient } from "../testing/sse.js";
import { gatedTool } from "./support/gated-tool.js";
import { rawRequest } from "./support/raw-http.js";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));
const SECRET = "internal-detail-that-must-not-leak";

/** A route whose handler fails with a plain Error: a bug, which the host answers as 500 internal_error. */
const broken = definePlugin({
  manifest: { id: "broken-route", version: "1.0.0", description: "a route that throws", capabilities: ["routes"] },
  register(ctx) {
    ctx.routes.add(
      defineRoute({
        method: "GET",
        path: "/boom",
        operationId: "brokenBoom",
        summary: "throws",
        responses: { 200: T.Object({}) },
        handler: () => {
          throw new Error(SECRET);
        },
      }),
    );
  },
});

describe("stable error codes: every /api/v1 error body is {error, code} with a code from one list", function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let d: TestDaemon;
  let id: string;
  let gone: string;
  let sse: SseClient;
  // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document
  let doc: any;

  /** An error body: a string `error` and a listed `code` that goes with the response's status. */
  function checkBody(what: string, status: number, body: unknown): void {
    const b = body as { error?: unknown; code?: unknown };
    expect(b.error, what).to.be.a("string");
    expect(ERROR_CODE_LIST, `${what}: code ${String(b.code)}`).to.include(b.code);
    expect(ERROR_CODES[b.code as ErrorCode][0], `${what}: ${String(b.code)} comes with ${status}`).to.equal(status);
  }
  /** Checks an error response's status, body and (when given) its code. */
  function expectError(what: string, res: { status: number; body: unknown }, status: number, code?: ErrorCode) {
    expect(res.status, what).to.equal(status);
    checkBody(what, res.status, res.body);
    if (code) expect((res.body as { code?: unknown }).code, what).to.equal(code);
  }

  before(async () => {
    fake = await startFakeProvider();
    d = await startTestDaemon({
      config: {
        provider: { baseURL: fake.url, apiKey: "sk-test", model: "fake-model" },
        permissions: { rules: [{ action: "deny", pattern: "rm -rf *" }] },
        pluginCapabilities: { "broken-route": ["routes"] },
      },
      builtins: [...builtinPlugins, gatedTool(), broken].map(builtinSource),
    });
    id = await d.createSession({ cwd: d.home });
    gone = await d.createSession();
    expect((await d.delete(`/sessions/${gone}`)).status).to.be.within(200, 299);
    sse = await d.sse(`/sessions/${id}/events`);
    doc = (await d.get("/openapi.json")).body;
  });
  after(async () => {
    sse?.close();
    await d?.cleanup();
    await fake?.close();
  });

  /** Every operation of the served document: method, path template, whether it takes a body. */
  function operations(): Array<{ method: string; path: string; body: boolean; secured: boolean }> {
    const out = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Record<string, unknown>>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const security = op.security as unknown[] | undefined;
        out.push({
          method: method.toUpperCase(),
          path: path.replace(/^\/api\/v1/, ""),
          body: op.requestBody !== undefined,
          secured: !(Array.isArray(security) && security.length === 0),
        });
      }
    }
    return out;
  }

  it("sweeps every operation: without credentials (401 unauthorized) and with malformed JSON (400 invalid_json)", async () => {
    let n = 0;
    for (const op of operations()) {
      const concrete = op.path.replace(/\{[^}]+\}/g, id);
      if (op.secured) {
        const res = await d.request(op.method, concrete, op.method === "GET" ? undefined : {}, { auth: false });
        expectError(`${op.method} ${op.path} without credentials`, res, 401, "unauthorized");
        n++;
      }
      if (op.body) {
        const res = await d.request(op.method, concrete, undefined, { raw: '{"text": ' });
        expectError(`${op.method} ${op.path} with malformed JSON`, res, 400, "invalid_json");
        n++;
      }
    }
    expect(n).to.be.greaterThan(60);
  });

  it("sweeps every operation on an unknown session: each error carries a code", async () => {
    let errors = 0;
    for (const op of operations()) {
      if (!op.path.includes("{") || op.path.endsWith("/events")) continue;
      const res = await d.request(op.method, op.path.replace(/\{[^}]+\}/g, gone), op.body ? {} : undefined);
      if (res.status < 400) continue;
      checkBody(`${op.method} ${op.path} on a deleted session`, res.status, res.body);
      errors++;
    }
    expect(errors).to.be.greaterThan(20);
    expectError("GET a deleted session", await d.get(`/sessions/${gone}`), 404, "session_not_found");
    expectError("chat in a deleted session", await d.post(`/sessions/${gone}/chat`, { text: "hi" }), 404);
    expectError("events of a deleted session", await d.get(`/sessions/${gone}/events`), 404, "session_not_found");
  });

  it("names bad bodies, queries, paths, routes, sizes and encodings", async () => {
    expectError("extra property", await d.post("/sessions", { nope: 1 }), 400, "validation_failed");
    expectError("wrong type", await d.post("/sessions", { cwd: 42 }), 400, "validation_failed");
    expectError("query out of range", await d.get("/sessions?limit=0"), 400, "validation_failed");
    expectError("missing body", await d.post(`/sessions/${id}/rename`), 400, "validation_failed");
    expectError("refused by the handler", await d.post("/sessions", { cwd: "relative" }), 400, "bad_request");
    expectError("empty chat", await d.post(`/sessions/${id}/chat`, { text: "  " }), 400, "bad_request");
    expectError("bad percent-encoding", await d.get("/sessions/%zz"), 400, "bad_request");
    expectError("a path no session id matches", await d.get(`/sessions/${"x".repeat(300)}`), 404);
    expectError("unknown route", await d.get("/no/such/route"), 404, "route_not_found");
    expectError("unknown method", await d.request("PATCH", "/sessions"), 404, "route_not_found");
    expectError("unknown persona", await d.post("/sessions", { persona: "no-such" }), 404, "not_found");
    const huge = JSON.stringify({ title: "x".repeat(10 * 1024 * 1024) });
    const tooLarge = await d.request("POST", `/sessions/${id}/rename`, undefined, { raw: huge });
    expectError("too large", tooLarge, 413, "payload_too_large");
    const encoded = await d.request("POST", `/sessions/${id}/rename`, undefined, {
      raw: '{"title":"x"}',
      headers: { "content-encoding": "x-unknown" },
    });
    expectError("unknown content encoding", encoded, 415, "unsupported_media_type");
  });

  it("names auth, Host and cross-site refusals", async () => {
    expectError("wrong token", await d.get("/sessions", { auth: "wrong-token-wrong-token" }), 401, "unauthorized");
    const evil = await rawRequest(`${d.api}/server/status`, {
      host: "evil.example",
      authorization: `Bearer ${d.token}`,
    });
    expectError("foreign Host", { status: evil.status, body: JSON.parse(evil.body) }, 403, "host_not_allowed");
    const cross = await d.get("/server/status", { headers: { origin: "http://evil.example" } });
    expectError("cross-site Origin", cross, 403, "cross_site");
  });

  it("names conflicts: a resolved confirmation, no pending question, a configured rule, a running turn", async () => {
    expectError("config rule", await d.delete("/permissions/rules/config-1"), 409, "rule_from_config");
    expectError("unknown rule", await d.delete("/permissions/rules/r_nope"), 404, "not_found");
    const question = await d.post(`/sessions/${id}/question`, { values: ["a"] });
    expectError("no question", question, 409, "no_pending_question");
    const unknown = await d.post(`/sessions/${id}/bash-confirm`, { id: "c_unknown", allow: true });
    expectError("unknown confirmation", unknown, 404, "confirmation_not_found");

    fake.script(tools([{ name: "risky", args: { what: "make clean" }, id: "r1" }]), text("done"));
    expect((await d.post(`/sessions/${id}/chat`, { text: "clean" })).status).to.equal(202);
    const ask = (await sse.waitForType("bash_confirm")).json;
    expect((await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: true })).status).to.equal(202);
    await sse.waitFor(() => sse.ofType("end").length >= 1, 15_000);
    const again = await d.post(`/sessions/${id}/bash-confirm`, { id: ask.id, allow: false });
    expectError("answered twice", again, 409, "confirmation_resolved");

    let release!: () => void;
    fake.script(turn({ content: "x" }, { waitFor: new Promise<void>((r) => (release = r)) }));
    const from = sse.frames.length;
    expect((await d.post(`/sessions/${id}/chat`, { text: "hold" })).status).to.equal(202);
    await sse.waitFor((f) => f.json?.type === "status" && f.json.status === "running", 5000, from);
    expectError("mode while running", await d.post(`/sessions/${id}/mode`, { mode: "plan" }), 409, "turn_running");
    expectError("clean while running", await d.post(`/sessions/${id}/clean-context`), 409, "turn_running");
    expectError("fork while running", await d.post(`/sessions/${id}/fork`, {}), 409, "turn_running");
    const blocked = await d.post(`/sessions/${id}/command`, { command: "/undo" });
    expectError("blocking command while running", blocked, 409, "agent_running");
    release();
    await sse.waitFor(() => sse.ofType("end").length >= 2, 15_000);
  });

  it("answers a handler's bug as 500 internal_error without its details", async () => {
    const path = Object.entries(doc.paths as Record<string, Record<string, { operationId?: string }>>).find(
      ([, ops]) => ops.get?.operationId === "brokenBoom",
    )?.[0];
    expect(path).to.be.a("string");
    const res = await d.get((path as string).replace(/^\/api\/v1/, ""));
    expectError("a plain Error in a handler", res, 500, "internal_error");
    expect(res.text).not.to.include(SECRET);
  });

  it("the OpenAPI document's Error.code enum and the README's table are the list in code", () => {
    const schema = doc.components.schemas.Error;
    expect(schema.required).to.include.members(["error", "code"]);
    expect(schema.properties.code.enum).to.deep.equal(ERROR_CODE_LIST);
    const readme = readFileSync(README, "utf8");
    const section = readme.slice(readme.indexOf("### Error codes"), readme.indexOf("### Tool errors"));
    const rows = [...section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(rows).to.deep.equal(ERROR_CODE_LIST.map((c) => [c, ERROR_CODES[c][0]]));
  });
});
