import { definePlugin, defineRoute, defineTool, T } from "agentd";

/** `pluginOptions.hello` in the agentd config: validated (defaults applied) before `register`. */
const Options = T.Object({ greeting: T.String({ default: "Hello", minLength: 1, maxLength: 40 }) });

// Its manifest (id, version, description, capabilities) is the "agentd" key of package.json.
export default definePlugin({
  options: Options,
  register(ctx) {
    // `ctx.options` is typed from Options.
    const greet = (name: string) => `${ctx.options.greeting}, ${name}!`;
    ctx.tools.add(
      defineTool({
        name: "hello_greet",
        description: "Greets someone by name",
        parameters: T.Object({ name: T.String({ minLength: 1, maxLength: 100, description: "Who to greet" }) }),
        readOnly: true,
        // `name` is typed from the schema and already checked against it.
        execute: async ({ name }) => ({ content: greet(name) }),
      }),
    );
    // GET /api/v1/plugins/hello/greeting?name=..., behind the daemon's auth (needs the "routes" capability).
    ctx.routes.add(
      defineRoute({
        method: "GET",
        path: "/greeting",
        operationId: "greeting",
        summary: "A greeting",
        query: T.Object({ name: T.Optional(T.String({ minLength: 1, maxLength: 100 })) }),
        responses: { 200: T.Object({ greeting: T.String() }) },
        handler: ({ query }) => ({ body: { greeting: greet(query.name ?? "world") } }),
      }),
    );
  },
});
