import {
  type AnyRoute,
  ApiError,
  defineRoute,
  MAX_SEQ,
  type MessageImages,
  SessionIdParams,
  type SessionService,
  type SessionStore,
  type StoredMessage,
  T,
} from "../../core/index.js";

const IMAGE_DATA_URL = /^data:(image\/[a-z0-9.+-]+)(?:;[^,;]*)*;base64,/i;

/** The `idx`-th image part of message `seq` (user images and images a tool such as `read` returned). */
export function imageOf(msg: StoredMessage | undefined, idx: number): { mime: string; bytes: Buffer } | undefined {
  if (!msg || !Array.isArray(msg.content)) return undefined;
  const part = msg.content.filter((p) => p.type === "image_url")[idx];
  if (part?.type !== "image_url") return undefined;
  const url = part.image_url.url;
  const m = IMAGE_DATA_URL.exec(url);
  if (!m?.[1]) return undefined;
  return { mime: m[1].toLowerCase(), bytes: Buffer.from(url.slice(m[0].length), "base64") };
}

/** One message by seq: the page of one user turn ending at `seq` contains it. */
async function messageAt(store: SessionStore, sessionId: string, seq: number): Promise<StoredMessage | undefined> {
  return (await store.historyPage(sessionId, 1, seq + 1)).messages.find((m) => m.seq === seq);
}

/** Where {@link imageRoute} serves an image: what the files plugin provides as `MessageImagesToken`. */
export const messageImages: MessageImages = {
  path: (sessionId, seq, idx) => `/sessions/${encodeURIComponent(sessionId)}/image?seq=${seq}&idx=${idx}`,
};

export function imageRoute(sessions: () => SessionService, store: () => SessionStore): AnyRoute {
  return defineRoute({
    method: "GET",
    path: "/sessions/:id/image",
    operationId: "getMessageImage",
    summary: "An image persisted with a message (the URLs in DisplayMessage.images and toolCalls[].images)",
    tags: ["sessions"],
    params: SessionIdParams,
    query: T.Object({
      seq: T.Integer({ minimum: 0, maximum: MAX_SEQ, description: "Message seq" }),
      idx: T.Optional(
        T.Integer({ minimum: 0, maximum: 1000, description: "Index among the message's images (default 0)" }),
      ),
    }),
    responses: {
      200: { description: "The image bytes", contentType: "image/*", schema: T.String({ format: "binary" }) },
    },
    handler: async ({ params, query }) => {
      const rec = await sessions().require(params.id);
      const img = imageOf(await messageAt(store(), rec.id, query.seq), query.idx ?? 0);
      if (!img) throw ApiError.notFound(`No image ${query.idx ?? 0} in message ${query.seq}`);
      return {
        bytes: img.bytes,
        contentType: img.mime,
        headers: {
          "Content-Length": String(img.bytes.length),
          // A message never changes once stored, so the browser may keep the image.
          "Cache-Control": "private, max-age=31536000, immutable",
          "X-Content-Type-Options": "nosniff",
          "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
        },
      };
    },
  });
}
