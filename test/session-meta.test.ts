import { expect } from "chai";
import { SessionServiceToken } from "../core/index.js";
import type { SessionMeta } from "../core/session-types.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";

// A plugin declares its own session metadata by declaration merging; readers then need no casts.
declare module "../core/session-types.js" {
  interface SessionMeta {
    "meta-probe.visits"?: number;
  }
}

describe("typed session metadata", () => {
  let d: TestDaemon;
  beforeEach(async () => {
    d = await startTestDaemon();
  });
  afterEach(async () => d.cleanup());

  it("keeps a plugin's declared key, typed, through the store next to the built-in keys", async () => {
    const id = await d.createSession();
    const svc = d.daemon.services.get(SessionServiceToken);
    const rec = await svc.require(id);
    const meta: SessionMeta = { ...rec.meta, "meta-probe.visits": 2, turnCap: 40 };
    await svc.update(id, { meta });
    const back = (await svc.require(id)).meta;
    const visits: number | undefined = back["meta-probe.visits"];
    const cap: number | undefined = back.turnCap;
    expect(visits).to.equal(2);
    expect(cap).to.equal(40);
    // The built-in keys are read by their owners without casts, e.g. /turn-cap shows the session's own cap.
    const res = await d.post(`/sessions/${id}/command`, { command: "/turn-cap" });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ turnCap: 40, effective: 40 });
    // Compile-time checks: the build fails if any of these lines stops being an error (never called).
    const wrong = (m: SessionMeta): SessionMeta[] => [
      // @ts-expect-error a declared key has its declared type
      { ...m, turnCap: "forty" },
      // @ts-expect-error keys nobody declared are not part of the metadata
      { ...m, undeclared: true },
      // @ts-expect-error a plugin's key has the type the plugin declared
      { ...m, "meta-probe.visits": "two" },
    ];
    void wrong;
  });
});
