import {
  ApiError,
  type ChatInput,
  type PermissionRules,
  type SessionRecord,
  type SessionService,
  type SessionTodo,
  type TurnManager,
} from "../../core/index.js";
import { openPlanSteps } from "./tools.js";

/** What a control request answers: the status and body of its HTTP reply. */
export interface ControlReply {
  status: number;
  body: unknown;
}

export interface ConfirmPayload {
  id: string;
  allow: boolean;
  remember?: { scope: "session" | "project" | "global"; pattern?: string };
}

/** Every turn control a client can post, with its payload (what the route's body says). */
export interface ControlPayloads {
  chat: ChatInput;
  steer: { text: string; clientMessageId?: string };
  followup: { text: string; clientMessageId?: string };
  abort: Record<string, never>;
  confirm: ConfirmPayload;
  question: { values: Array<string | string[]> };
  mode: { mode: "plan" | "build" };
  plan: { kind: "done" | "continue" };
}

export type ControlKind = keyof ControlPayloads;

/** `rec`: the session as the route read it (a forwarded command reads it again). */
export type ControlActions = {
  [K in ControlKind]: (sessionId: string, payload: ControlPayloads[K], rec?: SessionRecord) => Promise<ControlReply>;
};

export const CONTROL_KINDS: readonly ControlKind[] = [
  "chat",
  "steer",
  "followup",
  "abort",
  "confirm",
  "question",
  "mode",
  "plan",
];

/**
 * The turn controls as the daemon that runs the turn carries them out (the routes' work). On a team they run
 * where the turn runs: a daemon that does not own it forwards them (see TeamTurns), and the owner runs these.
 */
export function controlActions(
  svc: () => SessionService,
  turns: () => TurnManager,
  rules: () => PermissionRules | undefined,
): ControlActions {
  const accepted = (status: string): ControlReply => ({ status: 202, body: { ok: true, status } });
  const read = async (id: string, rec?: SessionRecord) => rec ?? (await svc().require(id));
  return {
    chat: async (id, input, rec) => accepted(await turns().chat(await read(id, rec), input)),
    steer: async (id, p, rec) => accepted(await turns().steer(await read(id, rec), p.text, p.clientMessageId)),
    followup: async (id, p, rec) => accepted(await turns().followup(await read(id, rec), p.text, p.clientMessageId)),
    abort: async (id) => {
      await turns().abort(id);
      return { status: 200, body: { ok: true } };
    },
    confirm: async (id, body, given) => {
      if (body.remember) {
        const rec = await read(id, given);
        const pending = turns().pendingConfirmation(id, body.id);
        const pattern = body.remember.pattern ?? pending.suggestedRule;
        if (!pattern) throw ApiError.badRequest("remember needs a pattern: this confirmation suggests none");
        const store = rules();
        if (!store) throw ApiError.conflict("Approval rules are not available (the permissions plugin is not loaded)");
        // Saved first: the command runs (or is refused) only once its rule is on disk.
        await store.add({
          scope: body.remember.scope,
          action: body.allow ? "allow" : "deny",
          pattern,
          cwd: rec.cwd,
          sessionId: rec.id,
          unsandboxed: pending.reasons?.includes("not sandboxed") === true,
        });
      }
      turns().answerConfirmation(id, body.id, body.allow);
      return { status: 202, body: { ok: true } };
    },
    question: async (id, body) => {
      turns().answerQuestion(id, body.values);
      return { status: 202, body: { ok: true } };
    },
    mode: async (id, body) => {
      if (turns().status(id) === "running")
        throw ApiError.conflict("A turn is running; abort it before changing the mode", { code: "turn_running" });
      const rec = await svc().setMode(id, body.mode);
      return { status: 200, body: { ok: true, mode: rec.mode } };
    },
    plan: async (id, body, given) => {
      const rec = await read(id, given);
      if (!rec.meta.planTransition) throw ApiError.conflict("No plan transition is awaiting a choice");
      if (body.kind === "continue") {
        const { planTransition: _kept, ...rest } = rec.meta;
        await svc().update(rec.id, { meta: rest });
        svc().publish(rec.id, { type: "decision_state" });
        return { status: 202, body: { ok: true } };
      }
      const steps = openPlanSteps(`${rec.cwd}/.agentd/plans/${rec.id}`);
      const todos: SessionTodo[] = steps.map((content) => ({
        content,
        status: "pending",
        priority: "medium",
        planStep: true,
      }));
      const { planTransition: _done, ...meta } = rec.meta;
      await svc().update(rec.id, { meta: { ...meta, todos } });
      svc().publish(rec.id, { type: "decision_state" });
      svc().publish(rec.id, { type: "todos_updated", todos });
      return { status: 202, body: { ok: true } };
    },
  };
}
