import type { IncomingMessage } from "node:http";
import { expect } from "chai";
import { Authenticator, isLoopbackAddress } from "../host/http/auth.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { rawRequest } from "./support/raw-http.js";

interface OpenApiDoc {
  paths: Record<string, Record<string, unknown>>;
}

describe("HTTP foundation: auth, host/origin checks, errors", () => {
  let d: TestDaemon;
  let sessionId: string;
  before(async () => {
    d = await startTestDaemon();
    sessionId = await d.createSession();
  });
  after(async () => d.cleanup());

  it("serves the OpenAPI document without auth and with the version header", async () => {
    const res = await d.get("/openapi.json", { auth: false });
    expect(res.status).to.equal(200);
    expect(res.body.openapi).to.equal("3.1.1");
    expect(res.body.info.version).to.equal("1.0.0");
    expect(res.headers.get("agentd-api-version")).to.equal("1.0.0");
  });

  it("answers 401 {error} on every protected operation without credentials, and with a wrong token", async () => {
    const doc = (await d.get<OpenApiDoc>("/openapi.json")).body;
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        if (!["get", "post", "delete", "put", "patch"].includes(method)) continue;
        if (path === "/api/v1/openapi.json") continue;
        const concrete = path.replace(/\{[^}]+\}/g, sessionId);
        for (const auth of [false, "wrong-token-wrong-token-wrong-token"] as const) {
          const res = await d.request(method.toUpperCase(), concrete, method === "get" ? undefined : {}, { auth });
          expect(res.status, `${method} ${path}`).to.equal(401);
          expect(res.body.error, `${method} ${path}`).to.be.a("string");
          expect(res.headers.get("agentd-api-version")).to.equal("1.0.0");
        }
        checked++;
      }
    }
    expect(checked).to.be.greaterThan(10);
  });

  it("accepts the bearer token only from loopback peers", () => {
    for (const a of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "127.3.4.5"])
      expect(isLoopbackAddress(a), a).to.equal(true);
    for (const a of ["10.0.0.2", "192.168.1.5", "::ffff:10.0.0.2", undefined, ""])
      expect(isLoopbackAddress(a), String(a)).to.equal(false);
    const auth = new Authenticator("t".repeat(43));
    const fake = (remoteAddress: string) =>
      ({
        headers: { authorization: `Bearer ${"t".repeat(43)}` },
        socket: { remoteAddress },
      }) as unknown as IncomingMessage;
    expect(auth.authenticate(fake("127.0.0.1"))).to.equal("bearer");
    expect(auth.authenticate(fake("192.168.1.5"))).to.equal(null);
  });

  it("refuses a foreign Host header (DNS rebinding) and cross-site Origins", async () => {
    const url = `${d.api}/server/status`;
    const evil = await rawRequest(url, { host: "evil.example:1234", authorization: `Bearer ${d.token}` });
    expect(evil.status).to.equal(403);
    expect(JSON.parse(evil.body).error).to.match(/Host/);
    const ok = await rawRequest(url, { host: `localhost:${d.daemon.port}`, authorization: `Bearer ${d.token}` });
    expect(ok.status).to.equal(200);
    const cross = await d.get("/server/status", { headers: { origin: "http://evil.example" } });
    expect(cross.status).to.equal(403);
    const same = await d.get("/server/status", { headers: { origin: d.baseUrl } });
    expect(same.status).to.equal(200);
  });

  it("runs the browser login flow: a cookie session, throttled failures", async () => {
    const page = await d.get("/login", { auth: false });
    expect(page.status).to.equal(200);
    expect(page.text).to.include("<form");
    const bad = await d.post("/login", { token: "nope" }, { auth: false });
    expect(bad.status).to.equal(401);
    const good = await d.post("/login", { token: d.token }, { auth: false });
    expect(good.status).to.equal(200);
    const cookie = good.headers.get("set-cookie") ?? "";
    expect(cookie)
      .to.match(/HttpOnly/)
      .and.to.match(/SameSite=Strict/);
    const withCookie = await d.get("/server/status", { auth: false, headers: { cookie: cookie.split(";")[0] ?? "" } });
    expect(withCookie.status).to.equal(200);
    const forged = await d.get("/server/status", {
      auth: false,
      headers: { cookie: "agentd_session=9999999999.abc.def" },
    });
    expect(forged.status).to.equal(401);
  });

  it("gives JSON 404 for unknown API routes and unknown sessions", async () => {
    const unknown = await d.get("/no/such/route");
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.match(/Unknown API route/);
    expect(unknown.headers.get("agentd-api-version")).to.equal("1.0.0");
    for (const id of ["nope", "..%2F..%2Fetc", "a%00b", "x".repeat(300)]) {
      const res = await d.get(`/sessions/${id}`);
      expect(res.status, id).to.equal(404);
      expect(res.body.error).to.be.a("string");
    }
  });

  it("rejects bad input with 400/413 and a readable {error}, never a 500", async () => {
    const cases: Array<[string, string, unknown, number, RegExp?]> = [
      ["POST", "/sessions", { nope: 1 }, 400, /nope|additional/i],
      ["POST", "/sessions", { cwd: 42 }, 400, /cwd/],
      ["POST", "/sessions", { cwd: "relative/dir" }, 400, /absolute/],
      ["POST", "/sessions", { cwd: "/definitely/not/here" }, 400, /does not exist/],
      ["POST", "/sessions", { persona: "no-such-persona" }, 404, /persona/],
      ["GET", "/sessions?limit=0", undefined, 400, /limit/],
      ["GET", "/sessions?limit=201", undefined, 400, /limit/],
      ["GET", "/sessions?limit=abc", undefined, 400, /limit/],
      ["GET", "/sessions?offset=-1", undefined, 400, /offset/],
      ["GET", `/sessions/${sessionId}?turns=0`, undefined, 400, /turns/],
      ["GET", `/sessions/${sessionId}/history`, undefined, 400, /before/],
      ["POST", `/sessions/${sessionId}/rename`, {}, 400, /title/],
      ["POST", `/sessions/${sessionId}/rename`, { title: 5 }, 400, /title/],
      ["POST", `/sessions/${sessionId}/pin`, { pinned: "yes" }, 400, /pinned/],
      ["POST", "/sessions/unknown-id/rename", { title: "x" }, 404],
    ];
    for (const [method, path, body, status, re] of cases) {
      const res = await d.request(method, path, body);
      expect(res.status, `${method} ${path}`).to.equal(status);
      expect(res.body.error, `${method} ${path}`).to.be.a("string");
      if (re) expect(res.body.error, `${method} ${path}`).to.match(re);
    }
    const malformed = await d.request("POST", `/sessions/${sessionId}/rename`, undefined, { raw: '{"title": ' });
    expect(malformed.status).to.equal(400);
    expect(malformed.body.error).to.match(/Invalid JSON/);
    const huge = await d.request("POST", `/sessions/${sessionId}/rename`, undefined, {
      raw: JSON.stringify({ title: "x".repeat(10 * 1024 * 1024) }),
    });
    expect(huge.status).to.equal(413);
    expect(huge.body.error).to.match(/too large/);
    const status = await d.get("/server/status");
    expect(status.status).to.equal(200);
  });
});
