import { ApiError, defineRoute, SessionIdParams, T } from "../../../core/index.js";
import { Accepted, reply, type TurnRouteDeps, tags } from "./shared.js";

const MAX_IMAGES = 6;
const MAX_IMAGE_CHARS = 4 * 1024 * 1024;

const ChatRequest = T.Object(
  {
    text: T.Optional(T.String({ maxLength: 1_000_000 })),
    images: T.Optional(
      T.Array(
        T.String({
          pattern: "^data:image/[a-zA-Z0-9.+-]+;base64,",
          maxLength: MAX_IMAGE_CHARS,
          description: "A complete data URL",
        }),
        {
          maxItems: MAX_IMAGES,
        },
      ),
    ),
    clientMessageId: T.Optional(T.String({ minLength: 1, maxLength: 200, description: "De-duplicates retried POSTs" })),
    goal: T.Optional(
      T.Union([T.Boolean(), T.Integer({ minimum: 1, maximum: 200 })], {
        description: "Iteration budget for this turn (true = 25)",
      }),
    ),
  },
  { title: "ChatRequest", additionalProperties: false },
);

export function chatRoute({ svc, team }: TurnRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/sessions/:id/chat",
    operationId: "chat",
    summary: "Send a message: starts a turn (202), or is steered into the running one",
    tags,
    params: SessionIdParams,
    body: ChatRequest,
    bodyLimit: MAX_IMAGES * MAX_IMAGE_CHARS + 2 * 1024 * 1024,
    errors: [500],
    responses: { 202: Accepted },
    handler: async ({ params, body }) => {
      const rec = await svc().require(params.id);
      const text = body.text?.trim() ?? "";
      if (!text && !body.images?.length) throw ApiError.badRequest("Empty message: give text or images");
      const budget = body.goal === true ? 25 : typeof body.goal === "number" ? body.goal : undefined;
      const clientMessageId = body.clientMessageId?.trim();
      const input = { text, ...(body.images ? { images: body.images } : {}) };
      return reply(
        await team.control(
          params.id,
          "chat",
          {
            ...input,
            ...(clientMessageId ? { clientMessageId } : {}),
            ...(budget !== undefined ? { budget } : {}),
          },
          rec,
        ),
      );
    },
  });
}
