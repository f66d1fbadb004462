/**
 * Decisions agentd waits for, asked of the editor: dangerous-command confirmations and the project trust prompt
 * through `session/request_permission`, questions through elicitation (or a refusal the model can act on when the
 * editor has no forms). Answers go back through the daemon's own routes.
 */
import { type ElicitationPropertySchema, methods, type PermissionOption } from "@agentclientprotocol/sdk";
import { errorText } from "../api/client.js";
import type { StreamEvent } from "../api/events.js";
import type { AcpSession, SessionDeps } from "./session.js";
import { textContent } from "./tools.js";

const ALLOW_ONCE: PermissionOption = { optionId: "allow", name: "Allow once", kind: "allow_once" };
const REJECT: PermissionOption = { optionId: "reject", name: "Reject", kind: "reject_once" };
/** Saved by the daemon as a project rule (the event's suggestedRule), so the same command is not asked again. */
const allowAlways = (rule: string): PermissionOption => ({
  optionId: "allow_always",
  name: `Always allow \`${rule}\` in this project`,
  kind: "allow_always",
});

export const QUESTION_REFUSAL =
  "The user's editor cannot show questions (no form support over the Agent Client Protocol), so no answer was " +
  "given. Do not ask again: choose the most reasonable option yourself, say which one you chose and why, and go on.";

/** A `bash_confirm` (live or pending in a present-state frame) as a permission request on its tool call. */
export async function confirmCommand(
  session: AcpSession,
  deps: SessionDeps,
  ev: StreamEvent,
  running: Array<{ id: string; name: string; args: Record<string, unknown> }>,
  signal: AbortSignal,
): Promise<void> {
  const command = typeof ev.command === "string" ? ev.command : "";
  const tool = typeof ev.tool === "string" ? ev.tool : "bash";
  const latest = [...running].reverse();
  const call = latest.find((t) => t.name === tool && t.args.command === command) ?? latest.find((t) => t.name === tool);
  const reason = typeof ev.reason === "string" ? ev.reason : "it may be dangerous";
  const rule = typeof ev.suggestedRule === "string" ? ev.suggestedRule : undefined;
  const notConfined = Array.isArray(ev.reasons) && ev.reasons.includes("not sandboxed");
  const res = await deps.client.request(
    methods.client.session.requestPermission,
    {
      sessionId: session.id,
      toolCall: {
        toolCallId: call?.id ?? `confirm_${String(ev.id)}`,
        title: `Run ${command}`,
        kind: "execute",
        status: "pending",
        content: [
          textContent(
            `agentd asks before running this command: ${reason}` +
              (notConfined ? "\n\nWarning: commands are not sandboxed on this machine." : ""),
          ),
        ],
        rawInput: { command },
      },
      options: rule ? [ALLOW_ONCE, allowAlways(rule), REJECT] : [ALLOW_ONCE, REJECT],
    },
    { cancellationSignal: signal, stopWaitingOnCancel: true },
  );
  const chosen = res.outcome.outcome === "selected" ? res.outcome.optionId : undefined;
  const always = chosen === "allow_always" && rule !== undefined;
  const allow = chosen === ALLOW_ONCE.optionId || always;
  const r = await session.api.POST("/api/v1/sessions/{id}/bash-confirm", {
    params: { path: { id: session.id } },
    body: { id: String(ev.id), allow, ...(always ? { remember: { scope: "project" as const } } : {}) },
  });
  // 409: answered elsewhere (web UI, terminal), timed out or aborted meanwhile; nothing to do.
  if (r.error && r.response.status !== 409) deps.log(`bash-confirm: ${errorText(r.error, r.response)}`);
}

interface Question {
  question: string;
  options: Array<{ label: string; value: string; description?: string }>;
  multiSelect?: boolean;
}

/** A pending question through elicitation when the editor offers forms; otherwise a refusal the model reads. */
export async function answerQuestion(
  session: AcpSession,
  deps: SessionDeps,
  pending: unknown,
  signal: AbortSignal,
): Promise<void> {
  const questions = ((pending as { questions?: Question[] }).questions ?? []) as Question[];
  let values: Array<string | string[]> = questions.map(() => QUESTION_REFUSAL);
  if (deps.caps.elicitation?.form && questions.length) {
    const properties: Record<string, ElicitationPropertySchema> = {};
    questions.forEach((q, i) => {
      const choices = q.options.map((o) => ({ const: o.value, title: o.label }));
      properties[`q${i}`] = q.multiSelect
        ? { type: "array", title: q.question, minItems: 1, items: { anyOf: choices } }
        : { type: "string", title: q.question, oneOf: choices };
    });
    const res = await deps.client.request(
      methods.client.elicitation.create,
      {
        sessionId: session.id,
        mode: "form",
        message: questions.length === 1 ? (questions[0] as Question).question : "agentd has questions for you",
        requestedSchema: { type: "object", properties, required: Object.keys(properties) },
      },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    if (res.action === "accept" && "content" in res && res.content) {
      const content = res.content as Record<string, unknown>;
      values = questions.map((q, i) => {
        const v = content[`q${i}`];
        if (q.multiSelect) return Array.isArray(v) && v.length ? v.map(String) : QUESTION_REFUSAL;
        return typeof v === "string" && v.trim() ? v : QUESTION_REFUSAL;
      });
    } else {
      values = questions.map(
        () => "The user declined to answer this question. Do not ask again; proceed with your best judgement.",
      );
    }
  }
  const r = await session.api.POST("/api/v1/sessions/{id}/question", {
    params: { path: { id: session.id } },
    body: { values },
  });
  if (r.error && r.response.status !== 409) deps.log(`question: ${errorText(r.error, r.response)}`);
}

const TRUST: PermissionOption = { optionId: "trust", name: "Trust this project", kind: "allow_always" };
const DISTRUST: PermissionOption = { optionId: "distrust", name: "Don't trust", kind: "reject_always" };

/**
 * Before the first prompt of a session whose project waits for a trust decision (`projectTrust` on the session:
 * an undecided project with local skills, MCP servers, hooks, ...), the editor is asked whether to trust it. The
 * decision is the daemon's (POST /projects/trust), so every client sees it; a dismissed prompt decides nothing
 * and is not repeated in this process.
 */
export async function askTrust(session: AcpSession, deps: SessionDeps, askedRoots: Set<string>): Promise<void> {
  const r = await session.api.GET("/api/v1/sessions/{id}", {
    params: { path: { id: session.id }, query: { turns: 1 } },
  });
  const t = r.data?.projectTrust;
  if (!t?.required || askedRoots.has(t.path)) return;
  askedRoots.add(t.path);
  const found = Object.entries(t.resources)
    .filter(([, names]) => Array.isArray(names) && names.length)
    .map(([kind, names]) => `${kind}: ${(names as unknown[]).map(resourceName).join(", ")}`);
  const res = await deps.client.request(methods.client.session.requestPermission, {
    sessionId: session.id,
    toolCall: {
      toolCallId: `trust_${session.id}`,
      title: `Trust the project ${t.path}?`,
      kind: "other",
      status: "pending",
      content: [
        textContent(
          "This project has its own agentd resources, which run code or instruct the model only when the project " +
            `is trusted:\n${found.join("\n")}`,
        ),
      ],
    },
    options: [TRUST, DISTRUST],
  });
  if (res.outcome.outcome !== "selected") return;
  const trusted = res.outcome.optionId === TRUST.optionId;
  const set = await session.api.POST("/api/v1/projects/trust", { body: { cwd: t.path, trusted } });
  if (set.error) deps.log(`project trust: ${errorText(set.error, set.response)}`);
}

/** A resource name; project plugins are `{name, state}` (state: new, changed, trusted). */
const resourceName = (x: unknown) =>
  typeof x === "string" ? x : `${(x as { name?: string }).name} (${(x as { state?: string }).state})`;
