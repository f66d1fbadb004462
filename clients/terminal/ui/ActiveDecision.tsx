/** The one decision shown above the composer, if any: the rewind picker, the session picker, then what the turn waits for. */
import type { ReactElement } from "react";
import type { Api, Schemas } from "../../api/client.js";
import { ago, waitingMark } from "../format.js";
import { ConfirmPrompt, PlanPrompt, QuestionPrompt, TrustPrompt } from "./Decisions.js";
import type { KeyRoute } from "./keys.js";
import { Picker } from "./Picker.js";
import { type RewindChoice, RewindPicker } from "./RewindPicker.js";
import { describeResources, type SessionView } from "./store.js";
import type { DecisionAnswers } from "./useDecisions.js";

export interface ActiveDecisionProps {
  keys: KeyRoute;
  api: Api;
  sessionId: string;
  store: SessionView;
  answers: DecisionAnswers;
  rewindChoices: RewindChoice[] | undefined;
  closeRewind(): void;
  picker: Schemas["SessionSummary"][] | undefined;
  closePicker(): void;
  switchTo(id: string): void;
}

/** The decision's element, or null when the composer is active. */
export function activeDecision(p: ActiveDecisionProps): ReactElement | null {
  const { keys, store, answers } = p;
  const confirmation = store.confirmations[0];
  if (p.rewindChoices) {
    return (
      <RewindPicker
        keys={keys}
        api={p.api}
        sessionId={p.sessionId}
        choices={p.rewindChoices}
        onDone={(error) => {
          p.closeRewind();
          if (error) store.note(error, "error");
        }}
      />
    );
  }
  if (p.picker) {
    return (
      <Picker
        keys={keys}
        title="Switch to a session"
        items={p.picker.map((x) => ({
          label: `${x.title ?? "(untitled)"}`,
          value: x.id,
          badge: waitingMark(x.waiting) || undefined,
          hint: `${x.id === p.sessionId ? "(current) " : ""}${x.status === "running" ? "running · " : ""}${ago(x.updatedAt)} · ${x.cwd}`,
        }))}
        onSubmit={([id]) => {
          p.closePicker();
          if (id) p.switchTo(id);
        }}
        onCancel={p.closePicker}
      />
    );
  }
  if (store.trustRequired) {
    return (
      <TrustPrompt
        keys={keys}
        path={store.trustRequired.path}
        resources={describeResources(store.trustRequired.resources)}
        onChoice={answers.chooseTrust}
      />
    );
  }
  if (confirmation) {
    return (
      <ConfirmPrompt
        keys={keys}
        key={confirmation.id}
        confirmation={confirmation}
        onAnswer={(answer) => answers.answerConfirmation(confirmation.id, answer)}
      />
    );
  }
  if (store.question) {
    return (
      <QuestionPrompt
        keys={keys}
        key={store.question.id}
        questions={store.question.questions}
        onAnswer={answers.answerQuestion}
      />
    );
  }
  if (store.plan) return <PlanPrompt keys={keys} plan={store.plan} onChoice={answers.choosePlan} />;
  return null;
}
