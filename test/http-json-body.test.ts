import { expect } from "chai";
import { jsonBody } from "../host/http/json-body.js";

const text = (body: string | Buffer[]) => (typeof body === "string" ? body : Buffer.concat(body).toString("utf8"));

describe("HTTP: JSON response bodies", () => {
  const element = (i: number) =>
    [{ i, s: `é…😀 "${i}" \\`, nested: [i, { deep: null }] }, null, undefined, () => i, `x${i}`, 1.5e300][i % 6];

  it("writes any array as JSON.stringify does, in slices past 256 elements", () => {
    for (const n of [0, 1, 255, 256, 257, 511, 512, 513, 1000]) {
      const value = Array.from({ length: n }, (_, i) => element(i));
      const body = jsonBody(value);
      expect(text(body), `${n} elements`).to.equal(JSON.stringify(value));
      expect(typeof body === "string", `${n} elements`).to.equal(n <= 256);
    }
  });

  it("writes anything else as one string", () => {
    for (const value of [{ sessions: Array.from({ length: 600 }, (_, i) => i) }, "s", 3, null, true]) {
      expect(jsonBody(value)).to.equal(JSON.stringify(value));
    }
  });
});
