/**
 * The editor as agentd's file system for a session. When the editor offers `fs/read_text_file` and
 * `fs/write_text_file`, the session is attached to it (POST /sessions/{id}/editor); the daemon's read, write and
 * edit tools then ask for file contents with `editor_fs_request` events, which are answered here from the
 * editor's buffers (unsaved changes included) through POST /sessions/{id}/editor/reply.
 */
import { methods } from "@agentclientprotocol/sdk";
import { errorText } from "../api/client.js";
import type { StreamEvent } from "../api/events.js";
import type { AcpSession, SessionDeps } from "./session.js";

export async function attachEditor(session: AcpSession, deps: SessionDeps): Promise<void> {
  const fs = deps.caps.fs;
  if (!fs?.readTextFile && !fs?.writeTextFile) return;
  const r = await session.api.POST("/api/v1/sessions/{id}/editor", {
    params: { path: { id: session.id } },
    body: { readTextFile: fs.readTextFile === true, writeTextFile: fs.writeTextFile === true },
  });
  if (r.error) deps.log(`editor attach: ${errorText(r.error, r.response)}`);
}

export async function detachEditor(session: AcpSession): Promise<void> {
  await session.api.DELETE("/api/v1/sessions/{id}/editor", { params: { path: { id: session.id } } });
}

export async function serveEditorRequest(session: AcpSession, deps: SessionDeps, ev: StreamEvent): Promise<void> {
  // Another editor attached to the same session may be the one asked: answer only what this editor offers.
  if (ev.op === "read" && !deps.caps.fs?.readTextFile) return;
  if (ev.op === "write" && !deps.caps.fs?.writeTextFile) return;
  const id = String(ev.id);
  const path = String(ev.path);
  let body: { id: string; content?: string; error?: string };
  try {
    if (ev.op === "read") {
      const res = await deps.client.request(methods.client.fs.readTextFile, { sessionId: session.id, path });
      body = { id, content: res.content };
    } else if (ev.op === "write" && typeof ev.content === "string") {
      await deps.client.request(methods.client.fs.writeTextFile, {
        sessionId: session.id,
        path,
        content: ev.content,
      });
      body = { id };
    } else {
      body = { id, error: `unsupported editor request ${String(ev.op)}` };
    }
  } catch (err) {
    body = { id, error: (err as Error).message || "the editor refused the request" };
  }
  const r = await session.api.POST("/api/v1/sessions/{id}/editor/reply", {
    params: { path: { id: session.id } },
    body,
  });
  if (r.error && r.response.status !== 409) deps.log(`editor reply: ${errorText(r.error, r.response)}`);
}
