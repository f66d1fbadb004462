import {
  ApiError,
  DEFAULT_HISTORY_TURNS,
  defineRoute,
  isApiError,
  type SessionRecord,
  SessionSchema,
  T,
} from "../../../core/index.js";
import { checkToolPairs, type ImportDoc, importCwd, SessionExportSchema, toNewMessage } from "../transfer.js";
import type { SessionRouteDeps } from "./shared.js";

/** Imports are whole conversations: a larger body cap than ordinary requests. */
const IMPORT_LIMIT = 64 * 1024 * 1024;

const ImportedSession = T.Object(
  { id: T.String({ description: "The new session's id" }), session: SessionSchema },
  { title: "ImportedSession" },
);

/** POST /sessions/import (an addition to v1). */
export function importSessionRoute({ svc, store, imageUrls }: SessionRouteDeps) {
  return defineRoute({
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
  });
}
