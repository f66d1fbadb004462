/** The user's answers to what the turn waits for: a command's confirmation, a question, the plan, project trust. */
import { type Api, ok } from "../../api/client.js";
import type { ConfirmAnswer } from "./Decisions.js";
import type { SessionView } from "./store.js";

export interface DecisionAnswers {
  answerConfirmation(id: string, answer: ConfirmAnswer): void;
  answerQuestion(values: Array<string | string[]>): void;
  choosePlan(approve: boolean): void;
  chooseTrust(trusted: boolean): void;
}

export function useDecisions(
  api: Api,
  sessionId: string,
  store: SessionView,
  sendPrompt: (text: string) => Promise<unknown>,
  fail: (e: unknown) => void,
): DecisionAnswers {
  const params = { path: { id: sessionId } };
  const answerConfirmation = (id: string, answer: ConfirmAnswer) => {
    store.confirmations = store.confirmations.filter((c) => c.id !== id);
    if (answer.remember) {
      const where = { session: "for this session", project: "in this project", global: "everywhere" }[
        answer.remember.scope
      ];
      store.add({
        kind: "note",
        text: `remembered: allow ${answer.remember.pattern ?? "the suggested rule"} ${where}`,
        tone: "info",
      });
    }
    store.changed();
    void ok(
      api.POST("/api/v1/sessions/{id}/bash-confirm", {
        params,
        body: { id, allow: answer.allow, ...(answer.remember ? { remember: answer.remember } : {}) },
      }),
    ).catch(fail);
  };
  const answerQuestion = (values: Array<string | string[]>) => {
    store.question = undefined;
    store.add({
      kind: "note",
      text: `answered: ${values.map((v) => (Array.isArray(v) ? v.join(", ") : v)).join("; ")}`,
      tone: "info",
    });
    store.changed();
    void ok(api.POST("/api/v1/sessions/{id}/question", { params, body: { values } })).catch(fail);
  };
  const choosePlan = (approve: boolean) => {
    store.plan = undefined;
    store.changed();
    if (!approve) {
      store.note("the plan stays open; keep refining it", "dim");
      void ok(api.POST("/api/v1/sessions/{id}/plan-transition", { params, body: { kind: "continue" } })).catch(fail);
      return;
    }
    void (async () => {
      await ok(api.POST("/api/v1/sessions/{id}/plan-transition", { params, body: { kind: "done" } }));
      await ok(api.POST("/api/v1/sessions/{id}/mode", { params, body: { mode: "build" } }));
      await sendPrompt("The plan is approved. Implement it now.");
    })().catch(fail);
  };
  const chooseTrust = (trusted: boolean) => {
    const t = store.trustRequired;
    store.trustRequired = undefined;
    store.changed();
    if (!t) return;
    void ok(api.POST("/api/v1/projects/trust", { body: { cwd: t.path, trusted } }))
      .then(() =>
        store.note(
          trusted
            ? `trusted ${t.path}: its local resources load`
            : `not trusted: ${t.path} works with global resources only`,
          trusted ? "ok" : "dim",
        ),
      )
      .catch(fail);
  };
  return { answerConfirmation, answerQuestion, choosePlan, chooseTrust };
}
