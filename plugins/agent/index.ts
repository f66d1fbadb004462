import { join } from "node:path";
import {
  busToolHooks,
  definePlugin,
  EventBusToken,
  HostInfoToken,
  isInside,
  optional,
  PermissionRulesToken,
  PersonaRegistryToken,
  ProjectContextToken,
  ProjectTrustToken,
  ProviderRegistryToken,
  SandboxToken,
  type SessionRecord,
  type SessionService,
  SessionServiceToken,
  type SessionStore,
  SessionStoreToken,
  ToolRegistryToken,
  TurnControllerToken,
  TurnManager,
  TurnManagerToken,
} from "../../core/index.js";
import { controlActions } from "./control.js";
import { MarkerFile, type RunningTurn, readMarker } from "./marker.js";
import { endInterrupted } from "./recovered.js";
import { DECISION_WINDOW } from "./remote-decisions.js";
import { agentRoutes } from "./routes/index.js";
import { TeamTurns } from "./team.js";
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
    capabilities: ["routes", "storage", "filesystem"],
    provides: [TurnControllerToken.id, TurnManagerToken.id],
  },
  deps: {
    info: HostInfoToken,
    store: SessionStoreToken,
    sessions: SessionServiceToken,
    tools: ToolRegistryToken,
    providers: ProviderRegistryToken,
    personas: PersonaRegistryToken,
    bus: EventBusToken,
    trust: optional(ProjectTrustToken),
    project: optional(ProjectContextToken),
    sandbox: optional(SandboxToken),
    rules: optional(PermissionRulesToken),
  },
  register(ctx) {
    const { deps } = ctx;
    const settings = deps.info;
    // Resolved once, on first use (the session service is built when the first session is touched): the token path
    // reads a variable, not the container.
    let store: SessionStore | undefined;
    let sessionService: SessionService | undefined;
    const sessions = () => (sessionService ??= deps.sessions);
    const storeOf = () => (store ??= deps.store);
    const { tools, providers, personas, bus } = deps;
    // A project plugin's tools are offered only in sessions of its project.
    const offeredTools = (rec?: SessionRecord) => {
      const all = tools.list();
      if (!rec || !all.some((t) => t.projectRoot)) return all;
      const root = deps.trust?.projectRoot(rec.cwd);
      return all.filter((t) => !t.projectRoot || t.projectRoot === root);
    };
    const raw = {
      get contextWindow() {
        return settings.config("contextWindow") as number | undefined;
      },
      get confirmTimeoutMs() {
        return settings.config("confirmTimeoutMs") as number | undefined;
      },
    };
    const provider = (rec: SessionRecord) => {
      const wanted = rec.meta.provider;
      return (wanted ? providers.get(wanted) : undefined) ?? providers.list()[0];
    };
    // Sessions whose turn was running when the daemon died are ended at the next start (see start()).
    const marker = markerOf(ctx.dataDir());
    // Each running turn's entry: its session and the last event number before it. A session may have two for a
    // moment: a turn whose `end` is not stored yet, and the next turn.
    const running = new Map<number, RunningTurn>();
    let lastEntry = 0;
    const writeMarker = () => marker.write([...running.values()]);
    const recovery = {
      // Before the turn's first event: a crash once anything of the turn is stored finds the marker.
      turnStarting(sessionId: string): number {
        const entry = ++lastEntry;
        const owner = storeOf().turnOwnership?.daemonId;
        running.set(entry, { id: sessionId, after: sessions().lastSeq(sessionId), ...(owner ? { owner } : {}) });
        writeMarker();
        return entry;
      },
      // After its `end` is stored: a crash before that still finds the marker (and no `end` in the log).
      async turnEnded(entry: number): Promise<void> {
        await sessions().commit();
        running.delete(entry);
        writeMarker();
      },
    };

    const manager = new TurnManager({
      get sessions() {
        return sessions().writer;
      },
      publish: (id, e) => sessions().publish(id, e),
      bus,
      log: ctx.log,
      tools: offeredTools,
      provider,
      persona: (rec) => deps.project?.persona(rec.persona, rec.cwd) ?? personas.get(rec.persona),
      instructions: (rec) => deps.project?.instructions(rec.cwd) ?? "",
      settings: {
        maxTurnIterations: () => settings.maxTurnIterations ?? DEFAULT_MAX_ITERATIONS,
        contextWindow: () => raw.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
        confirmTimeoutMs: () => raw.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS,
      },
      isHidden: (abs, cwd) => deps.sandbox?.isHidden(abs, cwd) ?? (isInside(ctx.home, abs) && !isInside(ctx.home, cwd)),
      recovery,
    });
    const rules = () => deps.rules;
    // One owner per running turn when the store is shared by a team of daemons (else the manager, as it is).
    const team = new TeamTurns(manager, {
      ownership: () => storeOf().turnOwnership,
      actions: controlActions(sessions, () => manager, rules),
      durable: () => sessions().commit(),
      endOrphan: async (id, after) => {
        if (await hasEnd(storeOf(), id, after)) return;
        endInterrupted(sessions(), id, "The daemon that ran this turn stopped; another daemon ended the turn.");
      },
      recentEvents: async (id) => {
        const store = storeOf();
        const last = await store.eventSeqReserved(id);
        const from = Math.max(0, last - DECISION_WINDOW);
        return store.readEvents(id, from, DECISION_WINDOW, { durableOnly: true });
      },
      log: ctx.log,
    });
    ctx.services.provide(TurnControllerToken, team);
    ctx.services.provide(TurnManagerToken, team);
    ctx.events.on("session.deleted", ({ sessionId }) => {
      manager.editors.detach(sessionId);
    });

    const toolDeps: AgentToolDeps = {
      session: (id) => sessions().writer.record(id),
      setMeta: async (id, patch) => {
        await sessions().writer.setMeta(id, patch, { announce: true });
      },
      publish: (id, e) => sessions().publish(id, e),
      provider,
      tools: offeredTools,
      toolHooks: (sessionId, cwd, signal) => busToolHooks(bus, ctx.log, { sessionId, cwd, signal }),
      addSubagentUsage: (id, tokens) => sessions().writer.addUsage(id, { subagentTokens: tokens }),
    };
    for (const tool of [todoWriteTool(toolDeps), questionTool, planDoneTool(toolDeps), taskTool(toolDeps)])
      ctx.tools.add(tool);
    for (const route of agentRoutes(sessions, () => manager, team)) ctx.routes.add(route);
    teams.set(ctx.dataDir(), team);
  },
  async start(ctx) {
    const marker = markerOf(ctx.dataDir());
    const turns = readMarker(marker.file);
    if (turns.length > 0) {
      const { sessions, store } = ctx.deps;
      // A session named twice (a turn's `end` was being stored when its next turn began): the later turn decides.
      // Writes are stored in order, so an `end` after its start means both turns ended; none means one is owed.
      const latest = new Map<string, number>();
      for (const { id, after } of turns) latest.set(id, Math.max(after, latest.get(id) ?? after));
      for (const [id, after] of latest) {
        if (!(await sessions.find(id)) || (await hasEnd(store, id, after))) continue;
        endInterrupted(sessions, id, "The daemon stopped while this turn was running; the turn was ended.");
        ctx.log.warn({ sessionId: id }, "ended a turn interrupted by a daemon crash");
      }
      await sessions.commit();
      // The crashed daemon's leases are let go of now, not when they run out: this daemon takes its chats at once.
      const own = store.turnOwnership;
      for (const owner of new Set(turns.map((t) => t.owner))) if (own && owner) await own.forget(owner);
      marker.write([]);
    }
    // A team's daemon takes commands and takeovers from the start, not from its first request, and only once the
    // turns its own crash left are ended (a takeover of their leases then finds their `end` stored).
    teams.get(ctx.dataDir())?.join();
  },
  stop(ctx) {
    teams.delete(ctx.dataDir());
    const file = join(ctx.dataDir(), MARKER);
    markers.get(file)?.close();
    markers.delete(file);
  },
});

const MARKER = "running.json";
/** Each daemon's team service, by data directory (several daemons share a process in tests). */
const teams = new Map<string, TeamTurns>();
/** One open marker per daemon (several daemons share a process in tests), by file. */
const markers = new Map<string, MarkerFile>();
function markerOf(dataDir: string): MarkerFile {
  const file = join(dataDir, MARKER);
  let m = markers.get(file);
  if (!m) {
    m = new MarkerFile(file);
    markers.set(file, m);
  }
  return m;
}

/** Whether the session's stored log has an `end` after `after` (the turn did end; only the marker was stale). */
async function hasEnd(store: SessionStore, id: string, after: number): Promise<boolean> {
  let from = after;
  for (;;) {
    const page = await store.readEvents(id, from, 1000, { durableOnly: true });
    if (page.some((e) => e.type === "end")) return true;
    if (page.length < 1000) return false;
    from = page[page.length - 1]?.seq ?? from;
  }
}
