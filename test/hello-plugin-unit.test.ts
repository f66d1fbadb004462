// Imported the way a third-party plugin's own tests would: through the package's `agentd/testing` export.
import { makeToolContext, registerPlugin } from "agentd/testing";
import { expect } from "chai";
import hello from "../examples/hello-plugin/index.js";

describe("the example plugin, unit-tested with agentd/testing", () => {
  it("contributes a read-only hello tool and a greeting route", async () => {
    const { tools, routes } = registerPlugin(hello);
    expect(tools.map((t) => [t.name, t.readOnly])).to.deep.equal([["hello", true]]);
    expect(routes.map((r) => `${r.method} ${r.path}`)).to.include("GET /greeting");
    const result = await (tools[0] as (typeof tools)[number]).execute({ name: "Ada" }, makeToolContext());
    expect(result.content).to.equal("Hello, Ada!");
  });
});
