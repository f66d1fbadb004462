/** Decisions shown inline in place of the composer: confirmation, questions, plan transition, project trust. */
import { useState } from "react";
import type { QuestionSpec } from "../format.js";
import type { KeyRoute } from "./keys.js";
import { Picker } from "./Picker.js";
import type { Confirmation, PlanTransition } from "./store.js";

export function ConfirmPrompt(props: { keys: KeyRoute; confirmation: Confirmation; onAnswer(allow: boolean): void }) {
  const c = props.confirmation;
  return (
    <Picker
      keys={props.keys}
      title={`Run this ${c.tool === "ssh" ? "remote " : ""}command?`}
      detail={[`$ ${c.command}`, `why asked: ${c.reason}`]}
      color="yellow"
      items={[
        { label: "Allow once", value: "allow", hint: "(a)" },
        { label: "Deny", value: "deny", hint: "(d)" },
      ]}
      shortcuts={{ a: "allow", y: "allow", d: "deny", n: "deny" }}
      onSubmit={([v]) => props.onAnswer(v === "allow")}
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
