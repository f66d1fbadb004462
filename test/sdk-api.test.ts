import { readFileSync } from "node:fs";
import { expect } from "chai";
import { REPORT_FILE, renderSdkReport } from "../scripts/sdk-report.js";

describe("the SDK's API report (docs/sdk-api.md)", () => {
  it("lists every export of the `agentd` package as it is now (else run `npm run sdk:report`)", function () {
    // The checker runs in its own process (TypeScript 7's API): a few seconds on a loaded machine.
    this.timeout(120_000);
    const report = renderSdkReport();
    expect(report).to.match(/^### definePlugin \(function\)$/m);
    expect(report).to.match(/^### SessionServiceToken \(const\)$/m);
    // Engine classes are not part of the SDK.
    expect(report).not.to.match(/^### (TurnManager|SessionEventLog|SessionManager|SyncEventBus) /m);
    expect(readFileSync(REPORT_FILE, "utf8"), "docs/sdk-api.md is stale: run `npm run sdk:report`").to.equal(report);
  });
});
