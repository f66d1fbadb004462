import { defineRoute, T } from "../../../core/index.js";
import type { CommandEnv } from "../env.js";
import { suggest } from "../suggest.js";

export const SuggestionSchema = T.Object(
  {
    value: T.String({ description: "The completed composer text" }),
    label: T.String(),
  },
  { title: "Suggestion" },
);

const SuggestQuery = T.Object({
  q: T.Optional(T.String({ maxLength: 2000, description: "The composer text typed so far" })),
  session: T.Optional(T.String({ maxLength: 200, description: "Session whose working directory and model to use" })),
});

export function suggestRoute(env: CommandEnv) {
  return defineRoute({
    method: "GET",
    path: "/suggest",
    operationId: "suggest",
    summary: "Composer completions for a partial slash command (names, then arguments)",
    tags: ["catalog"],
    query: SuggestQuery,
    responses: { 200: T.Array(SuggestionSchema) },
    handler: async ({ query }) => {
      const rec = query.session ? await env.sessions().find(query.session) : undefined;
      return { body: suggest(env, query.q ?? "", rec) };
    },
  });
}
