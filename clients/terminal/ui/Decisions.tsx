/** Decisions shown inline in place of the composer: confirmation, questions, plan transition, project trust. */
import { useState } from "react";
import type { QuestionSpec } from "../format.js";
import type { KeyRoute } from "./keys.js";
import { Picker } from "./Picker.js";
import type { Confirmation, PlanTransition } from "./store.js";

/** How a confirmation is answered: once, or remembered as a rule of this scope (the pattern may be narrowed). */
export interface ConfirmAnswer {
  allow: boolean;
  remember?: { scope: "session" | "project" | "global"; pattern?: string };
}

const REASON_LABEL: Record<string, string> = {
  dangerous: "risky",
  network: "needs the network",
  "not sandboxed": "NOT SANDBOXED",
  rule: "a rule asks",
};

export function ConfirmPrompt(props: {
  keys: KeyRoute;
  confirmation: Confirmation;
  onAnswer(answer: ConfirmAnswer): void;
}) {
  const c = props.confirmation;
  const rule = c.suggestedRule;
  const kinds = (c.reasons ?? []).map((r) => REASON_LABEL[r] ?? r).join(", ");
  const remember = rule
    ? [
        { label: "Allow for this session", value: "session", hint: "(s)" },
        { label: "Always allow in this project", value: "project", hint: "(p)" },
        { label: "Always allow", value: "global", hint: "(g)" },
      ]
    : [];
  return (
    <Picker
      keys={props.keys}
      title={`Run this ${c.tool === "ssh" ? "remote " : ""}command?${kinds ? ` [${kinds}]` : ""}`}
      detail={[
        `$ ${c.command}`,
        `why asked: ${c.reason}`,
        ...(rule ? [`rule: ${rule}  (Other… types a narrower one for this project)`] : []),
      ]}
      color="yellow"
      items={[
        { label: "Allow once", value: "allow", hint: "(a)" },
        ...remember,
        { label: "Deny", value: "deny", hint: "(d)" },
      ]}
      other={rule !== undefined}
      shortcuts={{
        a: "allow",
        y: "allow",
        d: "deny",
        n: "deny",
        ...(rule ? { s: "session", p: "project", g: "global" } : {}),
      }}
      onSubmit={([v]) => {
        if (v === "allow" || v === "deny") return props.onAnswer({ allow: v === "allow" });
        if (v === "session" || v === "project" || v === "global")
          return props.onAnswer({ allow: true, remember: { scope: v } });
        // A typed rule: the user's narrower pattern, for this project.
        props.onAnswer({ allow: true, remember: { scope: "project", pattern: String(v ?? "").trim() || undefined } });
      }}
    />
  );
}

/** Asks the questions one after the other, then answers them all at once (one value per question). */
export function QuestionPrompt(props: {
  keys: KeyRoute;
  questions: QuestionSpec[];
  onAnswer(values: Array<string | string[]>): void;
}) {
  const [answers, setAnswers] = useState<Array<string | string[]>>([]);
  const i = answers.length;
  const q = props.questions[i];
  if (!q) return null;
  const total = props.questions.length;
  return (
    <Picker
      keys={props.keys}
      key={i}
      title={`${total > 1 ? `(${i + 1}/${total}) ` : ""}${q.question}`}
      items={q.options.map((o) => ({ label: o.label, value: o.value, hint: o.description }))}
      multi={q.multiSelect}
      other={!q.multiSelect}
      color="magenta"
      onSubmit={(values) => {
        const next = [...answers, q.multiSelect ? values : (values[0] as string)];
        if (next.length === total) props.onAnswer(next);
        else setAnswers(next);
      }}
    />
  );
}

export function PlanPrompt(props: { keys: KeyRoute; plan: PlanTransition; onChoice(approve: boolean): void }) {
  return (
    <Picker
      keys={props.keys}
      title="The plan is ready."
      detail={[props.plan.path ? `plan: ${props.plan.path}` : "", props.plan.summary ?? ""].filter(Boolean)}
      color="green"
      items={[
        { label: "Approve and build", value: "build" },
        { label: "Keep planning", value: "plan" },
      ]}
      onSubmit={([v]) => props.onChoice(v === "build")}
    />
  );
}

export function TrustPrompt(props: {
  keys: KeyRoute;
  path: string;
  resources: string[];
  onChoice(trust: boolean): void;
}) {
  return (
    <Picker
      keys={props.keys}
      title={`Trust the project ${props.path}?`}
      detail={[
        "It has local resources that load only in a trusted project:",
        ...props.resources.map((r) => `  ${r}`),
        "Without trust, the session works with global resources only.",
      ]}
      color="yellow"
      items={[
        { label: "Trust this project", value: "trust", hint: "(t)" },
        { label: "Don't trust", value: "no", hint: "(n)" },
      ]}
      shortcuts={{ t: "trust", y: "trust", n: "no" }}
      onSubmit={([v]) => props.onChoice(v === "trust")}
    />
  );
}
