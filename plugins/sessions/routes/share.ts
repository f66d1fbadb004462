import { defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { type SessionRouteDeps, tags } from "./shared.js";

export function shareSessionRoute({ svc }: SessionRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/share",
    operationId: "shareSession",
    summary: "Create (or return) the read-only share link of a session",
    description:
      "Optional body: toolResults (default false) shows tool results (file contents, command output) on the " +
      "page; given for a link that exists, it changes what that page shows.",
    tags,
    params: SessionIdParams,
    body: T.Object(
      { toolResults: T.Optional(T.Boolean({ description: "Show tool results on the page (default false)" })) },
      { additionalProperties: false, title: "ShareRequest" },
    ),
    bodyRequired: false,
    responses: {
      200: T.Object(
        {
          ok: T.Literal(true),
          token: T.String(),
          url: T.String({ description: "Relative URL of the public page" }),
        },
        { title: "ShareLink" },
      ),
    },
    handler: async ({ params, body }) => {
      const token = await svc().share(params.id, { toolResults: body?.toolResults });
      return { body: { ok: true as const, token, url: `/shared/${token}` } };
    },
  });
}
