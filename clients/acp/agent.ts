/**
 * The ACP agent: protocol requests mapped onto agentd's `/api/v1`. Every ACP session is an ordinary agentd
 * session (visible in the web UI and the terminal client); the daemon of the home is attached to, or started, on
 * the first request that needs it.
 */
import { readFileSync } from "node:fs";
import {
  type AgentApp,
  type AgentContext,
  agent,
  type ClientCapabilities,
  type ContentBlock,
  type McpServer,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type SessionModeState,
} from "@agentclientprotocol/sdk";
import { errorText, ok, type Schemas } from "../api/client.js";
import { attachDaemon, type DaemonConnection } from "../api/daemon.js";
import { askTrust } from "./decisions.js";
import { attachEditor, detachEditor } from "./editor-fs.js";
import { replayHistory } from "./history.js";
import { AcpSession, promptToChat, type SessionDeps } from "./session.js";
import { type AgentdMode, MODES } from "./updates.js";

/** agentd's default `contextWindow`, for usage events that do not carry theirs (older daemons). */
const CONTEXT_WINDOW = 128_000;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** ACP's MCP server list in agentd's `mcpServers` format (stdio and HTTP; SSE servers are skipped). */
export function mcpConfig(list: McpServer[]): {
  servers: Record<string, Record<string, unknown>>;
  skipped: string[];
} {
  const servers: Record<string, Record<string, unknown>> = {};
  const skipped: string[] = [];
  const pairs = (l: Array<{ name: string; value: string }> | undefined) =>
    Object.fromEntries((l ?? []).map((e) => [e.name, e.value]));
  for (const m of list) {
    if ("type" in m && m.type === "http") servers[m.name] = { url: m.url, headers: pairs(m.headers) };
    else if ("command" in m) servers[m.name] = { command: m.command, args: m.args, env: pairs(m.env) };
    else skipped.push(m.name);
  }
  return { servers, skipped };
}

function modeState(mode: AgentdMode): SessionModeState {
  return { currentModeId: mode, availableModes: MODES };
}

export interface AcpAgentOptions {
  home?: string;
  log: (msg: string) => void;
}

export class AcpAgent {
  private conn: Promise<DaemonConnection> | undefined;
  private caps: ClientCapabilities = {};
  private readonly sessions = new Map<string, AcpSession>();
  private readonly trustAsked = new Set<string>();
  private readonly trustChecked = new Set<string>();
  private readonly sessionsWithMcp = new Set<string>();
  private commands: Schemas["SlashCommand"][] | undefined;

  constructor(private readonly opts: AcpAgentOptions) {}

  private daemon(): Promise<DaemonConnection> {
    this.conn ??= attachDaemon({ home: this.opts.home }).catch((err: unknown) => {
      this.conn = undefined;
      throw RequestError.internalError(undefined, `cannot reach the agentd daemon: ${(err as Error).message}`);
    });
    return this.conn;
  }

  private deps(conn: DaemonConnection, client: AgentContext): SessionDeps {
    return { conn, client, caps: this.caps, log: this.opts.log, contextWindow: CONTEXT_WINDOW };
  }

  private session(id: string): AcpSession {
    const s = this.sessions.get(id);
    if (!s) throw RequestError.invalidParams(undefined, `Unknown session ${id}: create it or load it first`);
    return s;
  }

  app(): AgentApp {
    return agent({ name: "agentd" })
      .onRequest(methods.agent.initialize, ({ params }) => {
        this.caps = params.clientCapabilities ?? {};
        void this.daemon().catch(() => {}); // attach (or start the daemon) while the editor sets up
        return {
          protocolVersion: PROTOCOL_VERSION,
          agentInfo: { name: "agentd", title: "agentd", version: packageVersion() },
          agentCapabilities: {
            loadSession: true,
            promptCapabilities: { image: true, embeddedContext: true },
            mcpCapabilities: { http: true, sse: false },
          },
          authMethods: [],
        };
      })
      .onRequest(methods.agent.authenticate, () => ({}))
      .onRequest(methods.agent.session.new, async ({ params, client }) => {
        const conn = await this.daemon();
        const created = await conn.api.POST("/api/v1/sessions", { body: { cwd: params.cwd } });
        if (!created.data) throw RequestError.invalidParams(undefined, errorText(created.error, created.response));
        const s = await this.open(conn, client, created.data.id, created.data.session.cwd ?? params.cwd);
        await this.afterOpen(s, params.mcpServers);
        return { sessionId: s.id, modes: modeState(s.mode) };
      })
      .onRequest(methods.agent.session.load, async ({ params, client }) => {
        const conn = await this.daemon();
        const r = await conn.api.GET("/api/v1/sessions/{id}", {
          params: { path: { id: params.sessionId }, query: { turns: 100_000 } },
        });
        if (!r.data) {
          if (r.response.status === 404) throw RequestError.resourceNotFound(params.sessionId);
          throw RequestError.internalError(undefined, errorText(r.error, r.response));
        }
        this.sessions.get(params.sessionId)?.close();
        const s = new AcpSession(r.data.id, r.data.cwd, this.deps(conn, client));
        await replayHistory(s, r.data);
        await s.connect();
        this.sessions.set(s.id, s);
        await attachEditor(s, this.deps(conn, client));
        await this.afterOpen(s, params.mcpServers);
        return { modes: modeState(s.mode) };
      })
      .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
        const s = this.session(params.sessionId);
        const conn = await this.daemon();
        if (!this.trustChecked.has(s.id)) {
          this.trustChecked.add(s.id);
          await askTrust(s, this.deps(conn, client), this.trustAsked).catch((err: unknown) =>
            this.opts.log(`trust: ${(err as Error).message}`),
          );
        }
        const command = await this.slashCommand(conn, params.prompt);
        if (command) return { stopReason: await s.command(command) };
        return { stopReason: await s.prompt(params.prompt) };
      })
      .onNotification(methods.agent.session.cancel, async ({ params }) => {
        await this.sessions
          .get(params.sessionId)
          ?.cancel()
          .catch((err: unknown) => this.opts.log(`cancel: ${(err as Error).message}`));
      })
      .onRequest(methods.agent.session.setMode, async ({ params }) => {
        await this.session(params.sessionId).setMode(params.modeId);
        return {};
      });
  }

  private async open(conn: DaemonConnection, client: AgentContext, id: string, cwd: string): Promise<AcpSession> {
    const s = new AcpSession(id, cwd, this.deps(conn, client));
    await s.connect();
    this.sessions.set(id, s);
    await attachEditor(s, this.deps(conn, client));
    return s;
  }

  /**
   * After a new or loaded session: the editor's MCP servers are given to that session only (PUT
   * /sessions/{id}/mcp-servers), and its slash commands are announced.
   */
  private async afterOpen(s: AcpSession, mcpServers: McpServer[]): Promise<void> {
    const { servers, skipped } = mcpConfig(mcpServers);
    if (Object.keys(servers).length || this.sessionsWithMcp.has(s.id)) {
      const r = await s.api.PUT("/api/v1/sessions/{id}/mcp-servers", {
        params: { path: { id: s.id } },
        body: { mcpServers: servers },
      });
      if (r.error) throw RequestError.invalidParams(undefined, `MCP servers: ${errorText(r.error, r.response)}`);
      if (Object.keys(servers).length) this.sessionsWithMcp.add(s.id);
      else this.sessionsWithMcp.delete(s.id);
    }
    setImmediate(() => {
      void (async () => {
        if (skipped.length) {
          await s.notify({
            sessionUpdate: "agent_message_chunk",
            content: {
              type: "text",
              text: `> MCP servers not connected (SSE transport is not supported): ${skipped.join(", ")}\n\n`,
            },
          });
        }
        const commands = await this.listCommands(s);
        await s.notify({
          sessionUpdate: "available_commands_update",
          availableCommands: commands.map((c) => ({
            name: c.name.replace(/^\//, ""),
            description: c.description,
            ...(c.takesArgs ? { input: { hint: "arguments" } } : {}),
          })),
        });
      })().catch((err: unknown) => this.opts.log(`session setup: ${(err as Error).message}`));
    });
  }

  private async listCommands(s: AcpSession) {
    this.commands ??= await ok(s.api.GET("/api/v1/commands"));
    return this.commands;
  }

  /** A prompt that is one known slash command (`/undo`, `/model x`, ...) runs as that command, not as chat. */
  private async slashCommand(conn: DaemonConnection, prompt: ContentBlock[]): Promise<string | undefined> {
    const { text, images } = promptToChat(prompt);
    const line = text.trim();
    if (images.length || !line.startsWith("/") || line.includes("\n")) return undefined;
    const name = line.split(/\s/, 1)[0] as string;
    this.commands ??= await ok(conn.api.GET("/api/v1/commands"));
    const known = this.commands.some((c) => c.name === name || c.aliases?.includes(name));
    return known ? line : undefined;
  }

  /**
   * Detaches the editor from its sessions, closes the MCP servers it gave them and their streams (the daemon and
   * the sessions stay).
   */
  async shutdown(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(
      all.map(async (s) => {
        s.close();
        await detachEditor(s).catch(() => {});
        if (this.sessionsWithMcp.has(s.id)) {
          await s.api
            .PUT("/api/v1/sessions/{id}/mcp-servers", { params: { path: { id: s.id } }, body: { mcpServers: {} } })
            .catch(() => {});
        }
      }),
    );
  }
}
