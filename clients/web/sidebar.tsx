/** The session list: pinned first, then grouped by repository; search, paging, live updates from /sessions/events. */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api, ok, type Schemas, type SessionSummary } from "./api.js";
import { SearchField } from "./search-field.js";
import { modelLabel, online, panel, select, selectedId, sessions, sessionTotal, sidebarOpen } from "./store.js";

const LIMIT = 50;
let query = "";

export async function loadSessions(more = false): Promise<void> {
  const offset = more ? sessions.value.length : 0;
  // With a limit the list answers a page ({sessions, total}); without one, a bare array.
  const page = (await ok(
    api.GET("/api/v1/sessions", { params: { query: { limit: LIMIT, offset, ...(query ? { q: query } : {}) } } }),
  )) as Schemas["SessionPage"];
  sessions.value = more ? [...sessions.value, ...page.sessions] : page.sessions;
  sessionTotal.value = page.total;
}

/** A summary from the feed replaces the listed one at once (status, waiting); the order follows with the re-read. */
function patchSession(s: SessionSummary): void {
  const i = sessions.value.findIndex((x) => x.id === s.id);
  if (i < 0) return;
  const next = [...sessions.value];
  // The feed knows nothing of the search: keep why the row matched.
  next[i] = { ...s, match: next[i]?.match };
  sessions.value = next;
}

/**
 * Other tabs and devices: the all-sessions stream says what changed. A session's new summary is shown at once; the
 * list is re-read too (debounced), for its order and for sessions not on the page yet.
 */
function followSessions(): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const es = new EventSource("/api/v1/sessions/events");
  // This stream is always open: when it drops, the daemon is gone (the header says so at once); when it opens, back.
  es.onerror = () => {
    online.value = false;
  };
  es.onopen = () => {
    online.value = true;
  };
  es.onmessage = (m) => {
    const e = JSON.parse(m.data as string) as Schemas["SessionEvent"];
    if (e.type === "session_update") patchSession(e.session);
    if (e.type === "connected" || e.type.startsWith("session_") || e.type === "status") {
      clearTimeout(timer);
      timer = setTimeout(() => void loadSessions().catch(() => undefined), 150);
    }
    if (e.type === "session_deleted" && e.sessionId === selectedId.value) select(null);
  };
  return () => es.close();
}

const PINNED = "\u0000pinned";

/** The repository a session works on: its worktree's main checkout, else its directory. */
function repositoryOf(s: SessionSummary): string {
  return s.worktree?.repository ?? s.cwd;
}

const baseName = (path: string) => path.split("/").filter(Boolean).pop() ?? "/";

/**
 * Pinned sessions first, then one group per repository (a worktree session goes with its repository), in the order
 * of their most recent session (the list comes most recent first). A group is named by its folder, or by its whole
 * path when two folders have the same name.
 */
function groupSessions(list: SessionSummary[]): Array<{ key: string; name: string; sessions: SessionSummary[] }> {
  const groups = new Map<string, SessionSummary[]>();
  for (const s of list) {
    const key = s.pinned ? PINNED : repositoryOf(s);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  const names = new Map<string, number>();
  for (const key of groups.keys()) names.set(baseName(key), (names.get(baseName(key)) ?? 0) + 1);
  const name = (key: string) => (key === PINNED ? "Pinned" : (names.get(baseName(key)) ?? 0) > 1 ? key : baseName(key));
  return [...groups]
    .sort(([a], [b]) => Number(b === PINNED) - Number(a === PINNED))
    .map(([key, sessions]) => ({ key, name: name(key), sessions }));
}

const WAITING: Record<NonNullable<SessionSummary["waiting"]>, string> = {
  confirmation: "confirm a command",
  question: "answer a question",
  plan: "approve the plan",
};

/** The marker of a session that waits for its user: what for, readable at a glance. */
function WaitingBadge({ waiting }: { waiting: NonNullable<SessionSummary["waiting"]> }) {
  return (
    <span class="waiting" data-waiting={waiting} title={`This session waits for you to ${WAITING[waiting]}`}>
      Needs you: {WAITING[waiting]}
    </span>
  );
}

/** "just now", "5 min ago", "3 h ago", "2 d ago", then the date. */
function since(iso: string, now = Date.now()): string {
  const min = Math.round((now - Date.parse(iso)) / 60_000);
  if (min < 1) return "just now";
  if (min < 60) return `${min} min ago`;
  if (min < 24 * 60) return `${Math.round(min / 60)} h ago`;
  if (min < 7 * 24 * 60) return `${Math.round(min / 1440)} d ago`;
  return new Date(iso).toLocaleDateString();
}

export function titleOf(s: { title?: string; id: string; cwd: string }): string {
  return s.title || `New session in ${s.cwd.split("/").filter(Boolean).pop() ?? "/"}`;
}

export function Sidebar() {
  const q = useSignal(query);
  useEffect(() => {
    void loadSessions().catch(() => undefined);
    return followSessions();
  }, []);
  return (
    <nav aria-label="Sessions" class={`sidebar${sidebarOpen.value ? " open" : ""}`}>
      <button type="button" class="primary wide" onClick={() => (panel.value = "new")}>
        New session
      </button>
      <SearchField
        label="Search sessions"
        value={q.value}
        onValue={(v) => {
          q.value = v;
          query = q.value.trim();
          void loadSessions().catch(() => undefined);
        }}
      />
      {groupSessions(sessions.value).map((g) => (
        <section key={g.key} aria-label={g.name}>
          <h2 class={g.key === PINNED ? "group" : "group repo"} title={g.key === PINNED ? undefined : g.key}>
            {g.name}
          </h2>
          <ul>
            {g.sessions.map((s) => (
              <li key={s.id}>
                <a
                  href={`#/s/${s.id}`}
                  aria-current={s.id === selectedId.value ? "page" : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    select(s.id);
                  }}
                >
                  <span class="title">{titleOf(s)}</span>
                  {s.status === "running" && (
                    <span class="run-dot" role="status" aria-label="running">
                      ●
                    </span>
                  )}
                  {s.waiting && <WaitingBadge waiting={s.waiting} />}
                  <span class="sub" title={`${s.cwd} · ${s.messageCount} messages · ${modelLabel(s.model)}`}>
                    {[
                      s.worktree ? `⎇ ${s.worktree.branch}` : "",
                      g.key === PINNED ? baseName(repositoryOf(s)) : "",
                      since(s.updatedAt),
                    ]
                      .filter(Boolean)
                      .join(" · ")}
                  </span>
                  {s.match && (
                    <span class="match" title={`${s.match.role} message #${s.match.seq}`}>
                      <Marked text={s.match.snippet} terms={query} />
                    </span>
                  )}
                </a>
              </li>
            ))}
          </ul>
        </section>
      ))}
      {sessions.value.length < sessionTotal.value && (
        <button type="button" class="wide" onClick={() => void loadSessions(true)}>
          Load more ({sessionTotal.value - sessions.value.length})
        </button>
      )}
      {sessions.value.length === 0 && <p class="muted">{query ? "No matching sessions." : "No sessions yet."}</p>}
    </nav>
  );
}

/** A search excerpt with the searched words marked. */
function Marked({ text, terms }: { text: string; terms: string }) {
  const words = terms.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return <>{text}</>;
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  // Words start where the search's prefix match does: "auth" marks "authentication".
  const parts = text.split(new RegExp(`(\\b(?:${escaped.join("|")})\\w*)`, "giu"));
  // split with a capturing group: the matches are the odd parts. Keyed by where each part starts.
  let at = 0;
  const marked = parts.map((part, n) => {
    const start = at;
    at += part.length;
    return n % 2 === 1 ? <mark key={start}>{part}</mark> : part;
  });
  return <>{marked}</>;
}
