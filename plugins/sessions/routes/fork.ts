import { DEFAULT_HISTORY_TURNS, defineRoute, SessionIdParams, SessionSchema, T } from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

export const ForkSessionResponse = T.Object(
  {
    id: T.String({ description: "The new session's id" }),
    session: SessionSchema,
  },
  { title: "ForkSessionResponse", description: "The new session in full, as GET /sessions/{id} returns it" },
);

export function forkSessionRoute({ svc, imageUrls }: SessionRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/fork",
    operationId: "forkSession",
    summary: "Fork an idle session: a new session with the context currently sent to the model",
    tags,
    params: SessionIdParams,
    errors: [409],
    responses: { 201: ForkSessionResponse },
    handler: async ({ params, apiBase }) => {
      const fork = await svc().fork(params.id);
      return {
        status: 201,
        body: { id: fork.id, session: await svc().view(fork.id, DEFAULT_HISTORY_TURNS, imageUrls(apiBase)) },
      };
    },
  });
}
