/**
 * The conversation: finished messages (memoised per item, only those near the viewport in the document), tool
 * cards, and the live streaming block.
 */
import { type Signal, signal, useSignalEffect } from "@preact/signals";
import { Component } from "preact";
import { useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { Markdown } from "./markdown.js";
import { RewindControl } from "./rewind.js";
import type { Item, SessionState, ToolState } from "./session.js";
import { showReasoning } from "./settings.js";
import { openProviderSettings } from "./store.js";
import { useVirtualList, VirtualRow } from "./virtual.js";

function parseArgs(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args) as unknown;
    return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The model-facing trailer of a failed result (`[error code: …; suggested fix: …]`): for the model, not the user. */
const MODEL_TRAILER = /\n?\[error code: [^\]]*\]\s*$/;
export const shownResult = (text: string) => text.replace(MODEL_TRAILER, "");

/** The commands waiting for Allow/Deny in the open session (their tool cards say so). */
export const awaitingConfirmation = signal<Array<{ tool: string; command: string }>>([]);

/** `edit` and `write` calls as a diff of what they change (or, for a failed call, would have changed). */
function EditDiff({ tool }: { tool: ToolState }) {
  const a = parseArgs(tool.args);
  const path = String(a.filePath ?? a.path ?? "");
  const removed = tool.name === "edit" ? String(a.oldString ?? "") : "";
  const added = String(tool.name === "edit" ? (a.newString ?? "") : (a.content ?? ""));
  const lines = [
    ...(removed ? removed.split("\n").map((l) => ({ t: "-", l })) : []),
    ...added.split("\n").map((l) => ({ t: "+", l })),
  ].slice(0, 400);
  const failed = tool.status === "error";
  return (
    <div class={`diff${failed ? " not-applied" : ""}`}>
      <div class="diff-path">
        {path}
        {failed && <span class="badge error">not applied</span>}
      </div>
      <pre>
        {lines.map((x, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a diff's lines never move; the position is their identity
          <div key={i} class={x.t === "+" ? "add" : "del"}>
            {x.t} {x.l}
          </div>
        ))}
      </pre>
    </div>
  );
}

function ToolCard({ tool }: { tool: Signal<ToolState> }) {
  const t = tool.value;
  const a = parseArgs(t.args);
  const summary =
    t.name === "bash" ? String(a.command ?? "") : String(a.filePath ?? a.path ?? a.pattern ?? a.query ?? a.url ?? "");
  const live = t.status === "pending" || t.status === "running";
  const waiting =
    live && awaitingConfirmation.value.some((c) => c.tool === t.name && c.command === String(a.command ?? ""));
  const label = waiting ? "waiting for you" : live ? "running" : t.status === "ok" ? "done" : "failed";
  const result = shownResult(t.result);
  return (
    <details
      class={`tool ${t.status}`}
      open={t.status !== "ok" || ["bash", "edit", "write"].includes(t.name) || undefined}
    >
      <summary>
        <span class="tool-name">{t.name}</span> <code class="tool-sum">{summary}</code>
        <span class={`badge ${waiting ? "waiting" : t.status}`}>{label}</span>
      </summary>
      {t.name === "edit" || t.name === "write" ? (
        <EditDiff tool={t} />
      ) : t.name === "bash" ? null : (
        <pre class="args">{JSON.stringify(a, null, 2)}</pre>
      )}
      {t.output && !result && <pre class="output">{t.output}</pre>}
      {result && (
        <pre class={`output${t.status === "error" ? " failed" : ""}`}>
          {result.length > 20_000 ? `${result.slice(0, 20_000)}\n…` : result}
        </pre>
      )}
    </details>
  );
}

function Thinking({ text, live }: { text: string; live?: boolean }) {
  if (!showReasoning.value || !text) return null;
  return (
    <details class="thinking" open={live || undefined}>
      <summary>Thinking</summary>
      <div class="thinking-text">{text}</div>
    </details>
  );
}

/** A failed turn: what went wrong, and the way to the provider settings when the provider is the cause. */
function ErrorView({ item }: { item: Item }) {
  const providerTrouble = /provider|model|api key|401|403|unauthori[sz]ed/i.test(item.content);
  return (
    <article class="msg error" aria-label="Error">
      <div class="error-head">
        <strong>The turn failed</strong>
        {item.at && (
          <time class="muted" dateTime={item.at}>
            {new Date(item.at).toLocaleString()}
          </time>
        )}
      </div>
      <div class="plain">{item.content}</div>
      {providerTrouble && (
        <button type="button" class="primary" onClick={openProviderSettings}>
          Open provider settings
        </button>
      )}
    </article>
  );
}

/** A finished message never changes its text, so it renders once; its tool cards update through their own signals. */
class MessageView extends Component<{ item: Item; sessionId: string }> {
  shouldComponentUpdate(next: { item: Item }): boolean {
    return next.item !== this.props.item;
  }
  render({ item, sessionId }: { item: Item; sessionId: string }) {
    if (item.role === "notice" && item.footer) return <div class="turn-footer">{item.footer}</div>;
    if (item.role === "error") return <ErrorView item={item} />;
    const cls = `msg ${item.role}`;
    return (
      <article
        class={cls}
        aria-label={item.role === "user" ? "You" : item.role === "assistant" ? "Assistant" : item.role}
      >
        {item.thinking && <Thinking text={item.thinking} />}
        {item.role === "assistant" ? (
          item.content && <Markdown text={item.content} />
        ) : (
          <div class="plain">{item.content}</div>
        )}
        {item.images?.map((src) => (
          <img key={src} class="thumb" src={src} alt="attachment" loading="lazy" />
        ))}
        {item.tools?.map((t) => (
          <ToolCard key={t.peek().id} tool={t} />
        ))}
        {item.footer && <div class="turn-footer">{item.footer}</div>}
        {item.role === "user" && typeof item.seq === "number" && <RewindControl sessionId={sessionId} seq={item.seq} />}
      </article>
    );
  }
}

/** The streaming answer: re-rendered at most once per animation frame, however fast tokens arrive. */
function LiveBlock({ s }: { s: SessionState }) {
  const [frame, setFrame] = useState({ text: s.liveText.peek(), thinking: s.liveThinking.peek() });
  useLayoutEffect(() => {
    let raf = 0;
    const schedule = () => {
      if (raf) return;
      raf = requestAnimationFrame(() => {
        raf = 0;
        setFrame({ text: s.liveText.peek(), thinking: s.liveThinking.peek() });
      });
    };
    const a = s.liveText.subscribe(schedule);
    const b = s.liveThinking.subscribe(schedule);
    return () => {
      a();
      b();
      cancelAnimationFrame(raf);
    };
  }, [s]);
  // Read directly (not through the frame), so the block disappears in the same render the final message appears.
  const empty = s.liveText.value === "" && s.liveThinking.value === "";
  if (empty || (!frame.text && !frame.thinking)) {
    if (s.status.value !== "running") return null;
    const waiting = s.confirmations.value.length > 0 || s.question.value !== null;
    return (
      <div class="msg assistant pending" role="status">
        {waiting ? "Waiting for your decision…" : "Working…"}
      </div>
    );
  }
  return (
    <article class="msg assistant live" aria-label="Assistant" aria-busy="true">
      <Thinking text={frame.thinking} live />
      {frame.text && <Markdown text={frame.text} streaming />}
    </article>
  );
}

/**
 * Under the finished conversation: send the last message again in place of it and its answer (Retry), or put it
 * back in the composer to change it (the new message follows).
 */
function LastTurnActions({ s }: { s: SessionState }) {
  const items = s.items.value;
  if (s.status.value === "running" || s.confirmations.value.length > 0) return null;
  const last = [...items].reverse().find((i) => i.role === "user");
  if (!last?.content) return null;
  return (
    <fieldset class="turn-actions" aria-label="Last message">
      <button type="button" class="link" onClick={() => void s.retry(last.seq, last.content)}>
        ↻ Retry
      </button>
      <button type="button" class="link" onClick={() => (s.draftRequest.value = last.content)}>
        ✎ Edit and resend
      </button>
    </fieldset>
  );
}

const nearBottom = (el: HTMLElement) => el.scrollHeight - el.scrollTop - el.clientHeight < 80;

export function Transcript({ s }: { s: SessionState }) {
  useSignalEffect(() => {
    awaitingConfirmation.value = s.confirmations.value.map((c) => ({ tool: c.tool, command: c.command }));
  });
  const ref = useRef<HTMLDivElement>(null);
  const listRef = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  /** Where the view was last seen: at its last scroll event, or where this code last put it. */
  const seenTop = useRef(0);
  /**
   * Whether the view follows the bottom. A scroll event comes a frame after the scroll: a move up that has not been
   * reported yet already counts, or a render in between would put the reader back at the bottom.
   */
  const following = () => {
    const el = ref.current;
    if (el && stick.current && el.scrollTop < seenTop.current - 1 && !nearBottom(el)) stick.current = false;
    return stick.current;
  };
  const toBottom = (el: HTMLElement) => {
    el.scrollTop = el.scrollHeight;
    seenTop.current = el.scrollTop;
  };
  /** While older history loads: the first row before it came (the list keeps the rows on screen in place). */
  const pagingFrom = useRef<{ first: string | undefined } | null>(null);
  const items = s.items.value;
  const keys = useMemo(() => items.map((i) => i.key), [items]);
  const rows = useVirtualList(keys, ref, listRef, following);
  /** Pages older history in, keeping what is on screen where it is (and no longer following the bottom). */
  const earlier = () => {
    stick.current = false;
    pagingFrom.current = { first: s.items.peek()[0]?.key };
    void s.showEarlier();
  };
  // Follow the bottom while the user is there; leave them alone when they scrolled up to read. Near the top, the
  // older history comes in by itself.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    seenTop.current = el.scrollTop;
    const onScroll = () => {
      const up = el.scrollTop < seenTop.current;
      seenTop.current = el.scrollTop;
      stick.current = nearBottom(el);
      if (up && el.scrollTop < 400 && s.hasMoreHistory.peek() && !s.loadingEarlier()) earlier();
    };
    el.addEventListener("scroll", onScroll, { passive: true });
    const ro = new ResizeObserver(() => {
      if (following()) toBottom(el);
    });
    for (const c of el.children) ro.observe(c);
    ro.observe(el);
    return () => {
      el.removeEventListener("scroll", onScroll);
      ro.disconnect();
    };
  }, [s]);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    // Scrolling renders too: the older rows are there once the first row changed.
    if (pagingFrom.current !== null && pagingFrom.current.first !== keys[0]) {
      pagingFrom.current = null;
      // Still at the top (a short page): the next one comes too, once this one is done.
      requestAnimationFrame(() => {
        if (el.scrollTop < 400 && s.hasMoreHistory.peek() && !s.loadingEarlier()) earlier();
      });
    } else if (following()) toBottom(el);
  });
  return (
    <div class="transcript" ref={ref} aria-live="off">
      <div class="transcript-inner">
        {s.hasMoreHistory.value && (
          <button type="button" class="earlier" onClick={earlier}>
            Load earlier messages
          </button>
        )}
        <div class="vlist" ref={listRef} style={{ paddingTop: `${rows.above}px`, paddingBottom: `${rows.below}px` }}>
          {items.slice(rows.start, rows.end).map((item) => (
            <VirtualRow key={item.key} vkey={item.key} observer={rows.observer}>
              <MessageView item={item} sessionId={s.id} />
            </VirtualRow>
          ))}
        </div>
        <LiveBlock s={s} />
        <LastTurnActions s={s} />
        {s.retryNote.value && (
          <div class="msg warning" role="status">
            {s.retryNote.value}
          </div>
        )}
      </div>
    </div>
  );
}
