import { definePlugin, T } from "../../core/index.js";

/** A tool that asks for confirmation like the shell gate does, and records whether it ran. */
export function gatedTool(ran: string[] = []) {
  return definePlugin({
    manifest: { id: "gated-tool", version: "1.0.0", description: "test tool behind the confirmation gate" },
    register(ctx) {
      ctx.tools.add({
        name: "risky",
        description: "needs confirmation",
        parameters: T.Object({ what: T.String() }),
        async execute(args, tc) {
          const allowed = await tc.confirm({ tool: "risky", command: String(args.what), reason: "test gate" });
          if (!allowed)
            return {
              content: "denied",
              isError: true,
              error: { code: "permission_denied", retryable: false, suggestedFix: "ask" },
            };
          ran.push(String(args.what));
          return { content: `ran ${args.what}` };
        },
      });
    },
  });
}
