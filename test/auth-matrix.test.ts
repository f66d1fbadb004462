import { expect } from "chai";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { ATTACKS, runAuthMatrix } from "./support/stress/auth-matrix.js";

/**
 * The auth matrix: every operation of the served OpenAPI document (plugin routes included) × every way of asking
 * without being allowed to. Generated from the document, so a route is covered the day it is added.
 */
describe("auth matrix (generated from the served OpenAPI document)", function () {
  this.timeout(60_000);
  let d: TestDaemon;

  before(async () => {
    d = await startTestDaemon();
  });
  after(async () => {
    await d.cleanup();
  });

  it("refuses every operation without valid credentials, with a bad Host, or from another site", async () => {
    const id = await d.createSession();
    const result = await runAuthMatrix(d.baseUrl, d.token, id);
    expect(result.operations).to.be.greaterThan(50);
    expect(result.requests).to.be.greaterThan(result.operations * (ATTACKS.length - 2));
    expect(result.allowed, JSON.stringify(result.allowed, null, 1)).to.deep.equal([]);
  });
});
