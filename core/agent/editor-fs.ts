import { randomBytes } from "node:crypto";
import type { EditorFs } from "../contributions.js";
import { ApiError } from "../errors.js";
import type { SessionEvent } from "../events.js";

/** How long a tool waits for the editor before it treats the editor as gone and uses the disk. */
export const EDITOR_TIMEOUT_MS = 30_000;
const RESOLVED_MEMORY = 200;

export interface EditorAccess {
  readTextFile: boolean;
  writeTextFile: boolean;
}

/** The editor did not answer (detached, timed out): the tool should use the disk instead. */
export class EditorGoneError extends Error {}

interface Waiter {
  sessionId: string;
  resolve: (content: string | undefined) => void;
  reject: (err: Error) => void;
}

/**
 * Editors attached to sessions (an ACP client whose editor offers fs/read_text_file and fs/write_text_file): the
 * file tools read and write through them, so the model sees unsaved buffers and edits land in the editor. A
 * request is an `editor_fs_request` event; the client answers it with POST /sessions/{id}/editor/reply.
 */
export class EditorFsBroker {
  private readonly attached = new Map<string, EditorAccess>();
  private readonly waiting = new Map<string, Waiter>();
  private readonly resolved: string[] = [];

  constructor(
    private readonly publish: (sessionId: string, event: SessionEvent) => void,
    private readonly timeoutMs = EDITOR_TIMEOUT_MS,
  ) {}

  attach(sessionId: string, access: EditorAccess): void {
    if (access.readTextFile || access.writeTextFile) this.attached.set(sessionId, access);
    else this.detach(sessionId);
  }

  /** Detaches the session's editor; requests still waiting fall back to the disk. */
  detach(sessionId: string): void {
    this.attached.delete(sessionId);
    for (const [id, w] of this.waiting) {
      if (w.sessionId === sessionId) this.settle(id, () => w.reject(new EditorGoneError("the editor detached")));
    }
  }

  access(sessionId: string): EditorAccess | undefined {
    return this.attached.get(sessionId);
  }

  /** The ToolContext view: only the operations the attached editor offers. */
  forTool(sessionId: string, signal: AbortSignal): EditorFs | undefined {
    const a = this.attached.get(sessionId);
    if (!a) return undefined;
    return {
      read: a.readTextFile
        ? async (path) => (await this.request(sessionId, { op: "read", path }, signal)) ?? ""
        : undefined,
      write: a.writeTextFile
        ? async (path, content) => {
            await this.request(sessionId, { op: "write", path, content }, signal);
          }
        : undefined,
    };
  }

  private request(
    sessionId: string,
    req: { op: "read" | "write"; path: string; content?: string },
    signal: AbortSignal,
  ): Promise<string | undefined> {
    if (signal.aborted) return Promise.reject(new Error("aborted"));
    const id = `e_${randomBytes(9).toString("base64url")}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        // No answer: the editor is gone (its client crashed or lost the stream); stop asking it.
        this.attached.delete(sessionId);
        this.settle(id, () => reject(new EditorGoneError("the editor did not answer")));
      }, this.timeoutMs);
      const onAbort = () => this.settle(id, () => reject(new Error("aborted")));
      const cleanup = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.set(id, {
        sessionId,
        resolve: (v) => {
          cleanup();
          resolve(v);
        },
        reject: (err) => {
          cleanup();
          reject(err);
        },
      });
      this.publish(sessionId, { type: "editor_fs_request", id, ...req });
    });
  }

  /** The editor's answer: file content for a read, nothing for a write, or the editor's error. */
  answer(sessionId: string, id: string, reply: { content?: string; error?: string }): void {
    const w = this.waiting.get(id);
    if (!w || w.sessionId !== sessionId) {
      if (this.resolved.includes(id)) throw ApiError.conflict(`Editor request ${id} was already settled`);
      throw ApiError.notFound(`No editor request with id ${id} in this session`);
    }
    this.settle(id, () => {
      if (reply.error !== undefined) w.reject(new Error(reply.error));
      else w.resolve(reply.content);
    });
  }

  private settle(id: string, fn: () => void): void {
    if (!this.waiting.delete(id)) return;
    this.resolved.push(id);
    if (this.resolved.length > RESOLVED_MEMORY) this.resolved.shift();
    fn();
  }
}
