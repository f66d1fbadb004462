import { defineRoute, SessionIdParams, type SessionRecord, T } from "../../../core/index.js";
import { exportJson, exportMarkdown, SessionExportSchema } from "../transfer.js";
import type { SessionRouteDeps } from "./shared.js";

function fileName(rec: SessionRecord, ext: string): string {
  const base = (rec.title ?? "session")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return `${base || "session"}-${rec.id}.${ext}`;
}

/** GET /sessions/{id}/export (an addition to v1). */
export function exportSessionRoute({ svc, store }: SessionRouteDeps) {
  return defineRoute({
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
  });
}
