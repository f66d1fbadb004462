/** What the agent waits on: command confirmations, questions, the plan transition, the trust prompt, the todo list. */
import { useSignal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { api, messageOf, ok } from "./api.js";
import type { Confirmation, QuestionSet, SessionState } from "./session.js";
import { showToast } from "./store.js";

const post = async (p: Promise<{ error?: unknown; response: Response; data?: unknown }>) => {
  try {
    await ok(p);
  } catch (err) {
    showToast(messageOf(err));
  }
};

function TimeLeft({ until }: { until: number }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const s = Math.max(0, Math.round((until - now) / 1000));
  return (
    <span class="muted">
      {Math.floor(s / 60)}:{String(s % 60).padStart(2, "0")} left
    </span>
  );
}

const REASON_LABEL: Record<string, string> = {
  dangerous: "risky",
  network: "needs the network",
  "not sandboxed": "not sandboxed",
  rule: "a rule asks",
};

function ConfirmCard({ s, c }: { s: SessionState; c: Confirmation }) {
  const rule = useSignal(c.suggestedRule ?? "");
  const answer = (allow: boolean, scope?: "project" | "global") =>
    post(
      api.POST("/api/v1/sessions/{id}/bash-confirm", {
        params: { path: { id: s.id } },
        body: { id: c.id, allow, ...(scope ? { remember: { scope, pattern: rule.value.trim() || undefined } } : {}) },
      }),
    );
  const until = typeof c.expiresAt === "string" ? Date.parse(c.expiresAt) : Number(c.expiresAt ?? 0);
  return (
    <section class="card decision" aria-label="Confirm command">
      <h3>
        Run this {c.tool === "bash" ? "command" : c.tool}? {until > 0 && <TimeLeft until={until} />}
      </h3>
      <pre class="command">{c.command}</pre>
      {c.reasons && c.reasons.length > 0 && (
        <p class="reasons">
          {c.reasons.map((r) => (
            <span key={r} class={`chip reason-${r.replace(/\s+/g, "-")}`}>
              {REASON_LABEL[r] ?? r}
            </span>
          ))}
        </p>
      )}
      <p class="reason">{c.reason}</p>
      {c.suggestedRule !== undefined && (
        <label class="rule-edit">
          Rule to remember
          <input
            aria-label="Rule to remember"
            value={rule.value}
            spellcheck={false}
            onInput={(e) => (rule.value = e.currentTarget.value)}
          />
        </label>
      )}
      <div class="row">
        <button type="button" class="primary" onClick={() => answer(true)}>
          Allow once
        </button>
        {c.suggestedRule !== undefined && (
          <>
            <button type="button" onClick={() => answer(true, "project")}>
              Always allow in this project
            </button>
            <button type="button" onClick={() => answer(true, "global")}>
              Always allow
            </button>
          </>
        )}
        <button type="button" class="danger" onClick={() => answer(false)}>
          Deny
        </button>
      </div>
    </section>
  );
}

function QuestionCard({ s, q }: { s: SessionState; q: QuestionSet }) {
  const values = useSignal<(string | string[])[]>(q.questions.map((x) => (x.multiSelect ? [] : "")));
  const other = useSignal<string[]>(q.questions.map(() => ""));
  const submit = (e: Event) => {
    e.preventDefault();
    const out = values.value.map((v, i) => (typeof v === "string" && other.value[i] ? (other.value[i] ?? "") : v));
    void post(api.POST("/api/v1/sessions/{id}/question", { params: { path: { id: s.id } }, body: { values: out } }));
  };
  const set = (i: number, v: string | string[]) => {
    const next = [...values.value];
    next[i] = v;
    values.value = next;
  };
  return (
    <form class="card decision" aria-label="Question" onSubmit={submit}>
      {q.questions.map((x, i) => (
        <fieldset key={x.question}>
          <legend>{x.question}</legend>
          {x.options.map((o) => {
            const cur = values.value[i];
            const checked = Array.isArray(cur) ? cur.includes(o.value) : cur === o.value;
            return (
              <label key={o.value} class="option">
                <input
                  type={x.multiSelect ? "checkbox" : "radio"}
                  name={`q${i}`}
                  checked={checked}
                  onChange={() => {
                    if (Array.isArray(cur)) set(i, checked ? cur.filter((v) => v !== o.value) : [...cur, o.value]);
                    else set(i, o.value);
                  }}
                />
                {o.label}
                {o.description && <span class="muted"> — {o.description}</span>}
              </label>
            );
          })}
          {!x.multiSelect && (
            <input
              type="text"
              aria-label={`Other answer to: ${x.question}`}
              placeholder="Other…"
              value={other.value[i]}
              onInput={(e) => {
                const n = [...other.value];
                n[i] = e.currentTarget.value;
                other.value = n;
              }}
            />
          )}
        </fieldset>
      ))}
      <button type="submit" class="primary">
        Answer
      </button>
    </form>
  );
}

function PlanCard({ s, plan }: { s: SessionState; plan: Record<string, unknown> }) {
  const id = { params: { path: { id: s.id } } };
  const approve = () => post(api.POST("/api/v1/sessions/{id}/plan-transition", { ...id, body: { kind: "done" } }));
  // Keeping on planning clears the choice for every client (decision_state follows); the card goes at once here.
  const keepPlanning = () => {
    s.planTransition.value = null;
    return post(api.POST("/api/v1/sessions/{id}/plan-transition", { ...id, body: { kind: "continue" } }));
  };
  const clean = async () => {
    await post(api.POST("/api/v1/sessions/{id}/clean-context", id));
    await approve();
  };
  return (
    <section class="card decision" aria-label="Plan ready">
      <h3>The plan is ready</h3>
      {typeof plan.summary === "string" && <p>{plan.summary}</p>}
      <div class="row">
        <button type="button" class="primary" onClick={approve}>
          Approve plan
        </button>
        <button type="button" onClick={clean}>
          Approve in a clean context
        </button>
        <button type="button" onClick={keepPlanning}>
          Keep planning
        </button>
      </div>
    </section>
  );
}

function TrustCard({ s }: { s: SessionState }) {
  const t = s.trust.value;
  if (!t) return null;
  const decide = async (trusted: boolean) => {
    try {
      await ok(api.POST("/api/v1/projects/trust", { body: { cwd: t.path, trusted } }));
      s.trust.value = null;
    } catch (err) {
      showToast(messageOf(err));
    }
  };
  const entries = Object.entries(t.resources).filter(([, v]) => Array.isArray(v) && v.length);
  return (
    <section class="card decision" aria-label="Trust this project?">
      <h3>Trust this project?</h3>
      <p>
        <code>{t.path}</code> has its own configuration. Trusting it lets the agent load:
      </p>
      <ul>
        {entries.map(([k, v]) => (
          <li key={k}>
            <strong>{RESOURCE_KINDS[k] ?? k}</strong>: {(v as unknown[]).map(resourceName).join(", ")}
          </li>
        ))}
      </ul>
      <p class="muted">Messages wait until you decide, so the first one does not run without them.</p>
      <div class="row">
        <button type="button" class="primary" onClick={() => decide(true)}>
          Trust project
        </button>
        <button type="button" onClick={() => decide(false)}>
          Don't trust
        </button>
      </div>
    </section>
  );
}

function Todos({ s }: { s: SessionState }) {
  const todos = s.todos.value;
  if (!todos.length) return null;
  return (
    <details class="card todos" open>
      <summary>
        Todo ({todos.filter((t) => t.status === "completed").length}/{todos.length})
      </summary>
      <ul>
        {todos.map((t) => (
          <li key={t.content} class={t.status}>
            {t.status === "completed" ? "✓" : t.status === "in_progress" ? "▸" : "○"} {t.content}
          </li>
        ))}
      </ul>
    </details>
  );
}

export function Decisions({ s }: { s: SessionState }) {
  const q = s.question.value;
  const plan = s.planTransition.value;
  return (
    <div class="decisions">
      <TrustCard s={s} />
      {s.confirmations.value.map((c) => (
        <ConfirmCard key={c.id} s={s} c={c} />
      ))}
      {q && <QuestionCard key={q.id ?? JSON.stringify(q.questions)} s={s} q={q} />}
      {plan && <PlanCard s={s} plan={plan} />}
      <Todos s={s} />
    </div>
  );
}

/** What each kind of project resource is, in words. */
const RESOURCE_KINDS: Record<string, string> = {
  personas: "Personas",
  skills: "Skills",
  rules: "Rules",
  contextFiles: "Context files (e.g. AGENTS.md)",
  mcp: "MCP servers",
  hooks: "Hooks (commands run on agent events)",
  ssh: "SSH hosts",
  plugins: "Plugins (code run by the daemon)",
};

/** A resource name; project plugins are `{name, state}` (state: new, changed, trusted). */
const resourceName = (x: unknown) =>
  typeof x === "string" ? x : `${(x as { name?: string }).name} (${(x as { state?: string }).state})`;
