import {
  type AnyRoute,
  ApiError,
  DEFAULT_HISTORY_TURNS,
  defineRoute,
  isApiError,
  type MessageImageUrl,
  SessionIdParams,
  type SessionRecord,
  SessionSchema,
  type SessionService,
  type SessionStore,
  T,
} from "../../core/index.js";
import {
  checkToolPairs,
  exportJson,
  exportMarkdown,
  type ImportDoc,
  importCwd,
  SessionExportSchema,
  toNewMessage,
} from "./transfer.js";

/** Imports are whole conversations: a larger body cap than ordinary requests. */
const IMPORT_LIMIT = 64 * 1024 * 1024;

const ImportedSession = T.Object(
  { id: T.String({ description: "The new session's id" }), session: SessionSchema },
  { title: "ImportedSession" },
);

function fileName(rec: SessionRecord, ext: string): string {
  const base = (rec.title ?? "session")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return `${base || "session"}-${rec.id}.${ext}`;
}

/** GET /sessions/{id}/export and POST /sessions/import (additions to v1). */
export function transferRoutes(
  svc: () => SessionService,
  store: () => SessionStore,
  imageUrls: (apiBase: string) => MessageImageUrl | undefined,
): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: "/sessions/:id/export",
      operationId: "exportSession",
      summary: "The whole conversation with tool calls and results, as JSON (re-importable) or Markdown",
      description:
        "format=json (default) answers a SessionExport that POST /sessions/import turns back into a session; " +
        "format=markdown answers text/markdown for people. Streamed, so large sessions are never held in memory.",
      tags: ["sessions"],
      params: SessionIdParams,
      query: T.Object({
        format: T.Optional(T.Union([T.Literal("json"), T.Literal("markdown")], { description: "Default json" })),
      }),
      responses: {
        200: {
          description: "application/json (SessionExport), or text/markdown with format=markdown",
          contentType: "application/json",
          schema: SessionExportSchema,
        },
      },
      handler: async ({ params, query }) => {
        const rec = await svc().require(params.id);
        const markdown = query.format === "markdown";
        const name = fileName(rec, markdown ? "md" : "json");
        return {
          bytes: markdown ? exportMarkdown(store(), rec) : exportJson(store(), rec),
          contentType: markdown ? "text/markdown; charset=utf-8" : "application/json; charset=utf-8",
          headers: { "Content-Disposition": `attachment; filename="${name}"` },
        };
      },
    }),
    defineRoute({
      method: "POST",
      path: "/sessions/import",
      operationId: "importSession",
      summary: "Create a session from a JSON export (GET /sessions/{id}/export), with the same messages",
      description:
        "The session gets a new id; its working directory is the exported one when it exists here, else the " +
        "default; an unknown persona falls back to the default one. Session settings (permission mode, turn cap) " +
        "are not imported.",
      tags: ["sessions"],
      body: SessionExportSchema,
      bodyLimit: IMPORT_LIMIT,
      responses: { 201: ImportedSession },
      handler: async ({ body, apiBase }) => {
        const doc = body as unknown as ImportDoc;
        checkToolPairs(doc.messages);
        const cwd = importCwd(doc.session.cwd);
        const base = { model: doc.session.model, title: doc.session.title ?? undefined, ...(cwd ? { cwd } : {}) };
        let rec: SessionRecord;
        try {
          rec = await svc().create({ ...base, persona: doc.session.persona });
        } catch (err) {
          if (!isApiError(err) || err.status !== 404) throw err;
          rec = await svc().create(base);
        }
        const s = store();
        const messages = doc.messages.map(toNewMessage);
        try {
          if (s.appendMessages) await s.appendMessages(rec.id, messages);
          else for (const m of messages) await s.appendMessage(rec.id, m);
        } catch (err) {
          await svc().deletePermanently(rec.id);
          throw ApiError.badRequest(`Could not import the messages: ${(err as Error).message}`);
        }
        const exported = body.session;
        const meta: Record<string, unknown> = { ...rec.meta, importedFrom: exported.id };
        if (exported.compactionSummary) meta.compactionSummary = exported.compactionSummary;
        await svc().update(rec.id, { mode: doc.session.mode, meta });
        return {
          status: 201,
          body: { id: rec.id, session: await svc().view(rec.id, DEFAULT_HISTORY_TURNS, imageUrls(apiBase)) },
        };
      },
    }),
  ];
}
