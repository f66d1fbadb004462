import { expect } from "chai";
import { defineRoute, T } from "../core/sdk.js";

const Greeting = T.Object({ greeting: T.String() });

/**
 * Route replies are typed from the route's `responses` (the file compiles only while they are: each
 * `@ts-expect-error` below must meet an error, or `tsc` fails the build).
 */
describe("defineRoute: replies typed from responses", () => {
  it("accepts a reply of a declared shape, and no other", async () => {
    const good = defineRoute({
      method: "GET",
      path: "/greeting",
      operationId: "greeting",
      summary: "A greeting",
      responses: { 200: Greeting },
      handler: () => ({ body: { greeting: "hello" } }),
    });
    defineRoute({
      method: "GET",
      path: "/wrong",
      operationId: "wrong",
      summary: "A reply of another shape",
      responses: { 200: Greeting },
      // @ts-expect-error the body is not a Greeting
      handler: () => ({ body: { text: "hello" } }),
    });
    defineRoute({
      method: "POST",
      path: "/accepted",
      operationId: "accepted",
      summary: "A literal the schema fixes",
      responses: { 202: T.Object({ ok: T.Literal(true) }) },
      // @ts-expect-error ok must be true
      handler: async () => ({ status: 202, body: { ok: false } }),
    });
    defineRoute({
      method: "GET",
      path: "/page",
      operationId: "page",
      summary: "Raw replies stay possible",
      responses: { 200: { contentType: "text/html", schema: T.String() } },
      handler: () => ({ html: "<p>hi</p>" }),
    });
    const reply = await good.handler({} as Parameters<typeof good.handler>[0]);
    expect(reply).to.deep.equal({ body: { greeting: "hello" } });
  });
});
