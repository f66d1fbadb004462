import { definePlugin, defineRoute, defineTool, T } from "agentd";

const Greeting = T.Object({ greeting: T.String() }, { title: "HelloGreeting" });

function greet(name: string): string {
  return `Hello, ${name}!`;
}

/**
 * A complete third-party plugin. Its manifest is also in package.json (`agentd` key) so the daemon can check it
 * before importing this code. Its routes are mounted under /api/v1/plugins/hello and require the daemon's auth.
 */
export default definePlugin({
  manifest: {
    id: "hello",
    version: "1.0.0",
    description: "Says hello: a `hello` tool and GET /api/v1/plugins/hello/greeting",
    capabilities: ["routes"],
  },
  register(ctx) {
    ctx.tools.add(
      defineTool({
        name: "hello",
        description: "Greets someone by name",
        parameters: T.Object({ name: T.String({ minLength: 1, maxLength: 100 }) }),
        readOnly: true,
        // `name` is a string: the type comes from the schema, and the arguments are checked against it first.
        execute: async ({ name }) => ({ content: greet(name) }),
      }),
    );
    ctx.routes.add(
      defineRoute({
        method: "GET",
        path: "/greeting",
        operationId: "greeting",
        summary: "A greeting",
        query: T.Object({ name: T.Optional(T.String({ minLength: 1, maxLength: 100 })) }),
        responses: { 200: Greeting },
        handler: ({ query }) => ({ body: { greeting: greet(query.name ?? "world") } }),
      }),
    );
    ctx.log.info("hello plugin registered");
  },
});
