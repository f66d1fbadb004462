import { Type as T } from "@sinclair/typebox";
import { defineRoute } from "../../core/routes.js";
import type { Sandbox, SandboxStatus } from "../../core/sandbox.js";
import { searchEngine } from "../../core/search/engine.js";
import type { TurnOwnership } from "../../core/store.js";
import type { HostRouteDeps } from "./shared.js";

const PluginStatusSchema = T.Object(
  {
    id: T.String(),
    version: T.String(),
    description: T.String(),
    origin: T.Union([T.Literal("builtin"), T.Literal("config"), T.Literal("project")]),
    project: T.Optional(
      T.String({ description: "origin project: the project root whose .agentd/plugins holds it (trusted, unchanged)" }),
    ),
    state: T.Union([T.Literal("active"), T.Literal("failed"), T.Literal("disabled")]),
    error: T.Optional(T.String()),
    required: T.Boolean(),
    capabilities: T.Array(T.String(), { description: "The capabilities the plugin holds" }),
    deniedCapabilities: T.Array(T.String(), {
      description:
        "Declared in the plugin's manifest but not allowed in the config (pluginCapabilities.<id>): not held",
    }),
    bootMs: T.Number(),
    contributions: T.Record(T.String(), T.Integer()),
  },
  { title: "PluginStatus" },
);

const DaemonStatusSchema = T.Object(
  {
    running: T.Literal(true),
    pid: T.Integer(),
    host: T.String(),
    port: T.Integer(),
    url: T.String(),
    startedAt: T.String({ format: "date-time" }),
    uptimeMs: T.Integer(),
    foreground: T.Boolean(),
    version: T.String(),
    apiVersion: T.String(),
    instanceId: T.String({ description: "This daemon's id (also among the daemons of a team on one database)" }),
    database: T.Object(
      {
        kind: T.String({ description: "sqlite, postgres, or what another storage plugin reports" }),
        url: T.Optional(T.String({ description: "Where the sessions are kept, any password shown as ***" })),
        connected: T.Boolean({ description: "The last use of the database succeeded" }),
      },
      { title: "DatabaseStatus" },
    ),
    team: T.Optional(
      T.Object(
        {
          daemonId: T.String({ description: "This daemon's id in the team (the instanceId)" }),
          leaseTimeoutMs: T.Integer({
            description: "A daemon that stops renewing its turns' leases this long has them taken over",
          }),
          daemons: T.Array(
            T.Object(
              {
                id: T.String(),
                host: T.String(),
                version: T.String(),
                lastHeartbeat: T.String({ format: "date-time" }),
              },
              { title: "TeamDaemon" },
            ),
            { description: "The live daemons on the database (a heartbeat within the lease timeout), this one too" },
          ),
        },
        { title: "TeamStatus", description: "Present when several daemons can share the database (PostgreSQL)" },
      ),
    ),
    sessions: T.Object({ running: T.Integer() }),
    sseClients: T.Integer(),
    sseQueuedBytes: T.Integer({ description: "Bytes queued for all SSE clients (bounded per client)" }),
    memory: T.Object({ rss: T.Integer(), heapUsed: T.Integer() }),
    plugins: T.Array(PluginStatusSchema),
    sandbox: T.Object(
      {
        enabled: T.Boolean({ description: "The agent's commands run confined" }),
        kind: T.Union([T.Literal("bubblewrap"), T.Literal("none"), T.Literal("off")], {
          description: "none: cannot confine (see reason; every command is asked about); off: turned off by config",
        }),
        network: T.Union([T.Literal("ask"), T.Literal("allow"), T.Literal("deny")]),
        writable: T.Array(T.String(), { description: "Writable besides the working directory and a private /tmp" }),
        reason: T.Optional(T.String()),
      },
      { title: "SandboxStatus" },
    ),
    search: T.Object(
      {
        engine: T.Union([T.Literal("ripgrep"), T.Literal("javascript")], {
          description: "What the grep and glob tools and the session file search run on",
        }),
        path: T.Optional(T.String({ description: "The ripgrep binary in use" })),
        version: T.Optional(T.String({ description: "Its version, once known" })),
        reason: T.Optional(T.String({ description: "Why ripgrep is not used" })),
      },
      { title: "SearchEngineStatus", additionalProperties: false },
    ),
  },
  { title: "DaemonStatus" },
);

/** How long `GET /server/status` waits for the sandbox's self-check before it reports the state as it is. */
const SANDBOX_WAIT_MS = 3000;

/**
 * The sandbox's state after its self-check (starting it now when it has not run yet: a few tens of ms), so a client
 * never reads "not confined" while the check is still to come. A check that hangs (up to its own timeout) holds the
 * status no longer than SANDBOX_WAIT_MS.
 */
async function checkedSandbox(s: Sandbox | undefined): Promise<SandboxStatus | undefined> {
  if (!s) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<SandboxStatus>((resolve) => {
    timer = setTimeout(() => resolve(s.status()), SANDBOX_WAIT_MS);
  });
  return Promise.race([s.ready(), late]).finally(() => clearTimeout(timer));
}

export function serverStatusRoute({ info, running, sandbox }: HostRouteDeps) {
  return defineRoute({
    method: "GET",
    path: "/server/status",
    operationId: "getServerStatus",
    summary: "Daemon status with the state of every plugin",
    tags: ["server"],
    responses: { 200: DaemonStatusSchema },
    handler: async () => {
      const sandboxStatus = await checkedSandbox(sandbox());
      const addr = info.address() ?? { host: "", port: 0, url: "" };
      const mem = process.memoryUsage();
      return {
        body: {
          running: true as const,
          pid: info.pid,
          ...addr,
          startedAt: info.startedAt,
          uptimeMs: Math.round(process.uptime() * 1000),
          foreground: info.foreground,
          version: info.version,
          apiVersion: "1.0.0",
          instanceId: info.instanceId,
          database: info.database(),
          ...teamStatus(info.team()),
          sessions: { running: running() },
          sseClients: info.sseClients(),
          sseQueuedBytes: info.sseQueuedBytes(),
          memory: { rss: mem.rss, heapUsed: mem.heapUsed },
          plugins: info.plugins(),
          sandbox: sandboxStatus ?? {
            enabled: false,
            kind: "none" as const,
            network: "ask" as const,
            writable: [],
            reason: "the sandbox plugin is not loaded",
          },
          search: { ...searchEngine() },
        },
      };
    },
  });
}

function teamStatus(own: TurnOwnership | undefined) {
  if (!own) return {};
  return { team: { daemonId: own.daemonId, leaseTimeoutMs: own.leaseTimeoutMs, daemons: own.daemons() } };
}
