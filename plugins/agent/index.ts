import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  busToolHooks,
  definePlugin,
  EventBusToken,
  PersonaRegistryToken,
  ProjectContextToken,
  ProviderRegistryToken,
  type SessionRecord,
  SessionServiceToken,
  SessionStoreToken,
  SettingsToken,
  ToolRegistryToken,
  TurnControllerToken,
  TurnManager,
  TurnManagerToken,
} from "../../core/index.js";
import { writeFileAtomic } from "./marker.js";
import { agentRoutes } from "./routes.js";
import { type AgentToolDeps, planDoneTool, questionTool, taskTool, todoWriteTool } from "./tools.js";

const DEFAULT_MAX_ITERATIONS = 500;
const DEFAULT_CONTEXT_WINDOW = 128_000;
const DEFAULT_CONFIRM_TIMEOUT_MS = 5 * 60_000;

/** The agent loop: turns, turn-control routes and the loop's own tools (todos, questions, sub-agents, plans). */
export default definePlugin({
  manifest: {
    id: "agent",
    version: "1.0.0",
    description: "Agent turns: chat, steer, follow-up, abort, questions, confirmations, modes, todos, sub-agents",
    requires: ["session-store"],
    provides: [TurnControllerToken.id, TurnManagerToken.id],
  },
  register(ctx) {
    const settings = ctx.services.get(SettingsToken);
    const store = () => ctx.services.get(SessionStoreToken);
    const sessions = () => ctx.services.get(SessionServiceToken);
    const tools = ctx.services.get(ToolRegistryToken);
    const providers = ctx.services.get(ProviderRegistryToken);
    const personas = ctx.services.get(PersonaRegistryToken);
    const raw = settings.raw as { maxTurnIterations?: number; contextWindow?: number; confirmTimeoutMs?: number };
    const provider = (rec: SessionRecord) => {
      const wanted = rec.meta.provider as string | undefined;
      return (wanted ? providers.get(wanted) : undefined) ?? providers.list()[0];
    };
    const manager = new TurnManager({
      get store() {
        return store();
      },
      publish: (id, e) => sessions().publish(id, e),
      bus: ctx.services.get(EventBusToken),
      log: ctx.log,
      tools: () => tools.list(),
      provider,
      persona: (rec) =>
        ctx.services.tryGet(ProjectContextToken)?.persona(rec.persona, rec.cwd) ?? personas.get(rec.persona),
      instructions: (rec) => ctx.services.tryGet(ProjectContextToken)?.instructions(rec.cwd) ?? "",
      settings: {
        maxTurnIterations: () => settings.maxTurnIterations ?? DEFAULT_MAX_ITERATIONS,
        contextWindow: () => raw.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
        confirmTimeoutMs: () => raw.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS,
      },
      updateSession: (id, patch) => sessions().update(id, patch),
    });
    ctx.services.provide(TurnControllerToken, manager);
    ctx.services.provide(TurnManagerToken, manager);
    sessions().setTurnController(manager);

    // Sessions whose turn was running when the daemon died are ended at the next start (see start()).
    const marker = join(ctx.dataDir(), "running.json");
    manager.onRunningChange = (ids) => writeFileAtomic(marker, JSON.stringify(ids));

    const toolDeps: AgentToolDeps = {
      session: (id) => store().getSession(id),
      setMeta: (id, patch) => {
        const rec = store().getSession(id);
        if (rec) sessions().update(id, { meta: { ...rec.meta, ...patch } });
      },
      publish: (id, e) => sessions().publish(id, e),
      provider,
      tools: () => tools.list(),
      toolHooks: (sessionId, cwd, signal) =>
        busToolHooks(ctx.services.get(EventBusToken), ctx.log, { sessionId, cwd, signal }),
      addSubagentUsage: (id, tokens) => {
        const rec = store().getSession(id);
        if (rec)
          store().updateSession(id, { usage: { ...rec.usage, subagentTokens: rec.usage.subagentTokens + tokens } });
      },
    };
    for (const tool of [todoWriteTool(toolDeps), questionTool, planDoneTool(toolDeps), taskTool(toolDeps)])
      ctx.tools.add(tool);
    for (const route of agentRoutes(sessions, () => manager)) ctx.routes.add(route);
  },
  start(ctx) {
    const marker = join(ctx.dataDir(), "running.json");
    let ids: string[] = [];
    try {
      ids = JSON.parse(readFileSync(marker, "utf8")) as string[];
    } catch {
      return;
    }
    const sessions = ctx.services.get(SessionServiceToken);
    for (const id of Array.isArray(ids) ? ids : []) {
      if (typeof id !== "string" || !sessions.find(id)) continue;
      sessions.publish(id, {
        type: "notice",
        message: "The daemon stopped while this turn was running; the turn was ended.",
      });
      sessions.publish(id, { type: "end", reason: "aborted", recovered: true });
      sessions.publish(id, { type: "status", status: "idle" });
      ctx.log.warn({ sessionId: id }, "ended a turn interrupted by a daemon crash");
    }
    writeFileAtomic(marker, "[]");
  },
});
