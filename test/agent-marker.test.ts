import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { MarkerFile, readMarker } from "../plugins/agent/marker.js";

describe("agent: crash-recovery marker file", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "agentd-marker-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads back the last write, also after shorter content overwrote longer content in place", () => {
    const file = join(dir, "data", "running.json");
    const m = new MarkerFile(file);
    m.write([
      { id: "s-long-session-id-1", after: 12345 },
      { id: "s2", after: 7 },
    ]);
    expect(readMarker(file)).to.deep.equal([
      { id: "s-long-session-id-1", after: 12345 },
      { id: "s2", after: 7 },
    ]);
    m.write([{ id: "s2", after: 7 }]);
    expect(readMarker(file)).to.deep.equal([{ id: "s2", after: 7 }]);
    m.write([]);
    expect(readMarker(file)).to.deep.equal([]);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    m.close();
    // A new writer (the next daemon start) keeps the padding rule for what the previous one left.
    const next = new MarkerFile(file);
    next.write([{ id: "x", after: 1 }]);
    next.close();
    expect(readMarker(file)).to.deep.equal([{ id: "x", after: 1 }]);
    expect(readFileSync(file, "utf8").trimEnd()).to.equal('[{"id":"x","after":1}]');
  });
});
