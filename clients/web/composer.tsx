/**
 * The composer: Enter sends, Shift+Enter breaks the line, Esc stops a running turn. While a turn runs a message steers
 * it or is queued for after it (the user's choice). The draft is kept per session, so a reload never loses it.
 */
import { useComputed, useSignal, useSignalEffect } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { api, messageOf, ok } from "./api.js";
import { ModelPicker } from "./models.js";
import { commands, insertCommand } from "./palette.js";
import type { SessionState } from "./session.js";
import { showToast, uid } from "./store.js";

interface Attachment {
  name: string;
  dataUrl: string;
  image: boolean;
}

const readAsDataUrl = (f: File) =>
  new Promise<string>((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(f);
  });

export function Composer({ s }: { s: SessionState }) {
  const draftKey = `agentd.draft.${s.id}`;
  const text = useSignal(localStorage.getItem(draftKey) ?? "");
  const whileRunning = useSignal<"steer" | "queue">("steer");
  const attachments = useSignal<Attachment[]>([]);
  const palette = useSignal<Array<{ value: string; label: string }>>([]);
  const active = useSignal(0);
  const busy = useSignal(false);
  const ref = useRef<HTMLTextAreaElement>(null);
  const running = useComputed(() => s.status.value === "running");
  const id = { params: { path: { id: s.id } } };

  useEffect(() => {
    ref.current?.focus();
  }, [s]);
  // The Ctrl+K palette puts commands here.
  useEffect(() => {
    insertCommand.current = (t: string) => {
      setText(t);
      ref.current?.focus();
    };
    return () => {
      insertCommand.current = null;
    };
  }, [s]);
  // "Edit and resend": the message comes back here, to change and send.
  useSignalEffect(() => {
    const t = s.draftRequest.value;
    if (t === null) return;
    s.draftRequest.value = null;
    setText(t);
    ref.current?.focus();
  });

  const setText = (v: string) => {
    text.value = v;
    if (v) localStorage.setItem(draftKey, v);
    else localStorage.removeItem(draftKey);
    void updatePalette(v);
  };

  async function updatePalette(v: string) {
    if (!v.startsWith("/") || v.includes(" ") || v.includes("\n")) {
      palette.value = [];
      return;
    }
    const all = await commands();
    // Names carry their slash; aliases are entries of their own (shown with what they run).
    const q = v.toLowerCase();
    // Every match (the list scrolls): a cut-off list would hide commands without saying so.
    palette.value = all
      .filter((c) => c.name.toLowerCase().startsWith(q))
      .map((c) => ({
        value: c.name,
        label: `${c.argumentHint ? `${c.argumentHint} · ` : ""}${c.aliasOf ? `→ ${c.aliasOf}` : c.description}`,
      }));
    active.value = 0;
  }

  async function addFiles(files: Iterable<File>) {
    for (const f of files) {
      try {
        const dataUrl = await readAsDataUrl(f);
        const image = f.type.startsWith("image/");
        if (!image) {
          await ok(api.POST("/api/v1/sessions/{id}/inputs/upload", { ...id, body: { name: f.name, dataUrl } }));
          showToast(`Uploaded ${f.name} to the session inputs`);
        }
        attachments.value = [...attachments.value, { name: f.name, dataUrl, image }];
      } catch (err) {
        showToast(`${f.name}: ${messageOf(err)}`);
      }
    }
  }

  async function send() {
    const body = text.value.trim();
    const images = attachments.value.filter((a) => a.image).map((a) => a.dataUrl);
    const files = attachments.value.filter((a) => !a.image).map((a) => a.name);
    if (busy.value || (!body && !images.length)) return;
    // Undecided trust: the first message would run without the project's rules and context files.
    if (s.trust.value && !body.startsWith("/")) {
      showToast("Decide whether to trust this project first: your message is kept.");
      return;
    }
    // The composer empties at once (a second Enter cannot send it twice); a refused send puts it back.
    const sent = { text: text.value, attachments: attachments.value };
    busy.value = true;
    setText("");
    attachments.value = [];
    try {
      if (body.startsWith("/") && !images.length) {
        const r = await ok(api.POST("/api/v1/sessions/{id}/command", { ...id, body: { command: body } }));
        if (r.message) s.push({ key: `c${Date.now()}`, role: "notice", content: r.message });
      } else {
        const full = files.length ? `${body}\n\n(attached: ${files.join(", ")})` : body;
        if (running.value && whileRunning.value === "queue") {
          await ok(api.POST("/api/v1/sessions/{id}/followup", { ...id, body: { message: full } }));
          s.chips.value = [...s.chips.value, { id: uid(), kind: "queued", text: full }];
        } else {
          const r = await ok(
            api.POST("/api/v1/sessions/{id}/chat", {
              ...id,
              body: { text: full, images: images.length ? images : undefined, clientMessageId: uid() },
            }),
          );
          if (r.status === "steered") s.chips.value = [...s.chips.value, { id: uid(), kind: "steer", text: full }];
        }
      }
    } catch (err) {
      // Unless something new was typed meanwhile.
      if (!text.value && !attachments.value.length) {
        setText(sent.text);
        attachments.value = sent.attachments;
      }
      showToast(messageOf(err));
    } finally {
      busy.value = false;
    }
  }

  const stop = () => void ok(api.POST("/api/v1/sessions/{id}/abort", id)).catch((e) => showToast(messageOf(e)));

  const onKey = (e: KeyboardEvent) => {
    const p = palette.value;
    if (p.length && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      active.value = (active.value + (e.key === "ArrowDown" ? 1 : p.length - 1)) % p.length;
      return;
    }
    if (p.length && e.key === "Tab") {
      e.preventDefault();
      setText(`${p[active.value]?.value ?? text.value} `);
      return;
    }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void send();
    } else if (e.key === "Escape") {
      if (p.length) palette.value = [];
      else if (running.value) stop();
    }
  };

  const setModel = async (model: string) => {
    try {
      const r = await ok(api.POST("/api/v1/sessions/{id}/command", { ...id, body: { command: `/model ${model}` } }));
      const info = s.info.peek();
      if (info) s.info.value = { ...info, model };
      if (r.message) showToast(r.message);
    } catch (err) {
      showToast(messageOf(err));
    }
  };

  // Shown at once (the box follows the click); put back if the daemon refuses.
  const setMode = async (mode: "build" | "plan") => {
    const before = s.mode.peek();
    s.mode.value = mode;
    try {
      await ok(api.POST("/api/v1/sessions/{id}/mode", { ...id, body: { mode } }));
    } catch (err) {
      s.mode.value = before;
      showToast(messageOf(err));
    }
  };

  return (
    <form
      class="composer"
      aria-label="Composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        e.preventDefault();
        if (e.dataTransfer?.files.length) void addFiles(e.dataTransfer.files);
      }}
    >
      {s.chips.value.length > 0 && (
        <ul class="chips" aria-label="Pending messages">
          {s.chips.value.map((c) => (
            <li key={c.id} class={`chip ${c.kind}`}>
              {c.kind === "steer" ? "Steering: " : "Queued: "}
              {c.text.slice(0, 80)}
            </li>
          ))}
        </ul>
      )}
      {palette.value.length > 0 && (
        <div class="palette" role="listbox" aria-label="Commands">
          <div class="palette-head muted" aria-hidden="true">
            {palette.value.length} {palette.value.length === 1 ? "command" : "commands"} · ↑↓ choose · Tab completes ·
            Ctrl+K for everything
          </div>
          {palette.value.map((p, i) => (
            <div
              key={p.value}
              role="option"
              tabIndex={-1}
              aria-selected={i === active.value}
              ref={(el) => {
                if (el && i === active.value) el.scrollIntoView({ block: "nearest" });
              }}
              onMouseDown={(e) => {
                e.preventDefault();
                setText(`${p.value} `);
                ref.current?.focus();
              }}
            >
              <code>{p.value}</code> <span class="muted">{p.label}</span>
            </div>
          ))}
        </div>
      )}
      {attachments.value.length > 0 && (
        <ul class="attachments" aria-label="Attachments">
          {attachments.value.map((a) => (
            <li key={a.name}>
              {a.image ? <img class="thumb" src={a.dataUrl} alt={a.name} /> : <span>{a.name}</span>}
              <button
                type="button"
                aria-label={`Remove ${a.name}`}
                onClick={() => (attachments.value = attachments.value.filter((x) => x !== a))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <textarea
        ref={ref}
        aria-label="Message"
        placeholder={running.value ? "Steer the agent, or queue a message…" : "Message (/ for commands)"}
        rows={3}
        value={text.value}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={onKey}
        onPaste={(e) => {
          const files = [...(e.clipboardData?.files ?? [])];
          if (files.length) {
            e.preventDefault();
            void addFiles(files);
          }
        }}
      />
      <div class="composer-bar">
        <ModelPicker current={s.info.value?.model ?? ""} choose={setModel} />
        <label class="file-btn">
          <input
            type="file"
            multiple
            aria-label="Attach files"
            onChange={(e) => {
              const f = e.currentTarget.files;
              if (f) void addFiles([...f]);
              e.currentTarget.value = "";
            }}
          />
          Attach
        </label>
        <label class="toggle">
          <input
            type="checkbox"
            checked={s.mode.value === "plan"}
            disabled={running.value}
            onChange={(e) => void setMode(e.currentTarget.checked ? "plan" : "build")}
          />
          Plan mode
        </label>
        {running.value && (
          <select
            aria-label="While a turn runs"
            value={whileRunning.value}
            onChange={(e) => (whileRunning.value = e.currentTarget.value as "steer" | "queue")}
          >
            <option value="steer">Steer now</option>
            <option value="queue">Queue for after</option>
          </select>
        )}
        <span class="send-group">
          {running.value && (
            <button type="button" class="danger" onClick={stop}>
              Stop
            </button>
          )}
          <button
            type="submit"
            class="primary"
            disabled={busy.value || s.trust.value !== null}
            title={s.trust.value ? "Decide about the project first" : undefined}
          >
            Send
          </button>
        </span>
      </div>
    </form>
  );
}
