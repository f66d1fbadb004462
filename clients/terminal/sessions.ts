/** `agentd sessions` (the list) and `agentd attach ID` (watch a session live, as `agentd run` prints a turn). */
import { ok, type Schemas } from "../api/client.js";
import { subscribe } from "../api/events.js";
import { connect } from "./connect.js";
import { ago, EXIT, type ToolResultLike, toolError, toolLine, waitingMark } from "./format.js";

export async function sessionsCommand(opts: { home?: string; json?: boolean; limit?: number }): Promise<number> {
  const conn = await connect(opts.home);
  const page = (await ok(
    conn.api.GET("/api/v1/sessions", { params: { query: { limit: opts.limit ?? 50 } } }),
  )) as Schemas["SessionPage"];
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(page.sessions)}\n`);
    return EXIT.ok;
  }
  if (page.sessions.length === 0) {
    process.stdout.write("no sessions yet (start one with `agentd`)\n");
    return EXIT.ok;
  }
  const rows = page.sessions.map((s) => [
    s.id,
    // What the session is doing (idle, running, needs you); plan mode is said after it.
    (waitingMark(s.waiting) || (s.status === "running" ? "running" : "idle")) + (s.mode === "plan" ? " (plan)" : ""),
    ago(s.updatedAt),
    String(s.messageCount),
    s.title ?? "(untitled)",
    s.cwd,
  ]);
  const head = ["ID", "STATE", "UPDATED", "MSGS", "TITLE", "DIRECTORY"];
  const widths = head.map((h, i) => Math.min(40, Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length))));
  const fmt = (r: string[]) =>
    r
      .map((c, i) =>
        i === r.length - 1
          ? c
          : (c.length > (widths[i] ?? 0) ? `${c.slice(0, (widths[i] ?? 1) - 1)}…` : c).padEnd(widths[i] ?? 0),
      )
      .join("  ");
  process.stdout.write(`${[head, ...rows].map(fmt).join("\n")}\n`);
  if (page.total > page.sessions.length) process.stdout.write(`(${page.total - page.sessions.length} more)\n`);
  return EXIT.ok;
}

/** Prints the session's recent history, then its live events until Ctrl-C (or the session is deleted). */
export async function attachCommand(id: string, opts: { home?: string; json?: boolean }): Promise<number> {
  const conn = await connect(opts.home);
  const session = await ok(conn.api.GET("/api/v1/sessions/{id}", { params: { path: { id }, query: { turns: 3 } } }));
  const out = process.stdout;
  const err = process.stderr;
  let last = "\n";
  const write = (s: string) => {
    if (!s) return;
    out.write(s);
    last = s;
  };
  const nl = () => {
    if (!last.endsWith("\n")) write("\n");
  };
  if (!opts.json) {
    err.write(`attached to ${session.id} (${session.title ?? "untitled"}, ${session.cwd}); Ctrl-C detaches\n`);
    for (const m of session.messages) {
      if (m.role === "user") write(`> ${m.content ?? ""}\n`);
      else if (m.role === "assistant") {
        for (const t of m.toolCalls ?? []) err.write(`${toolLine(t.name, t.args)}\n`);
        if (m.content) write(`${m.content}\n`);
      }
    }
  }
  return new Promise<number>((resolve) => {
    const sub = subscribe(
      conn,
      id,
      (ev) => {
        if (opts.json) {
          out.write(`${JSON.stringify(ev)}\n`);
          return;
        }
        switch (ev.type) {
          case "user_message":
            nl();
            write(`> ${(ev.message as { content?: string })?.content ?? ""}\n`);
            break;
          case "token":
            write(String(ev.text ?? ""));
            break;
          case "tool_start":
            nl();
            err.write(`${toolLine(String(ev.name), ev.args)}\n`);
            break;
          case "tool_end":
            if (ev.status === "error") err.write(`  ✗ ${toolError(ev.result as ToolResultLike)}\n`);
            break;
          case "bash_confirm":
            nl();
            err.write(`waiting for confirmation: ${ev.command} (${ev.reason ?? ""})\n`);
            break;
          case "end":
            nl();
            err.write(`[turn ended: ${ev.reason}]\n`);
            break;
          case "error":
            nl();
            err.write(`error: ${ev.message ?? ""}\n`);
            break;
          case "session_deleted":
          case "session_closed":
            sub.close();
            resolve(EXIT.ok);
            break;
        }
      },
      {
        onState: (s) => {
          if (s === "reconnecting") err.write("agentd: connection lost, reconnecting…\n");
        },
      },
    );
    process.once("SIGINT", () => {
      sub.close();
      resolve(EXIT.ok);
    });
  });
}
