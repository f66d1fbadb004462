import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir } from "node:os";
import { SyncEventBus } from "../core/events.js";
import { SandboxToken } from "../core/sandbox.js";
import { SessionServiceToken } from "../core/session-service.js";
import { SessionEventLogToken } from "../core/sessions.js";
import { SessionStoreToken } from "../core/store.js";
import { DEFAULT_PORT, type LoadedConfig, loadConfig } from "./config.js";
import { ServiceContainer } from "./container.js";
import { pluginSources, startProjectPlugins, storageChoice } from "./daemon-plugins.js";
import { createRegistries, provideHostServices } from "./host-services.js";
import { Authenticator, isLoopbackAddress } from "./http/auth.js";
import { listen } from "./http/listen.js";
import { buildOpenApi } from "./http/openapi.js";
import { createApp } from "./http/server.js";
import { SseHub } from "./http/sse.js";
import { PluginHost, type PluginHost as PluginHostType } from "./loader.js";
import { createLogger } from "./logger.js";
import type { PluginSource } from "./plugin-sources.js";
import type { ProjectPlugins } from "./project-plugins.js";
import { hostRoutes } from "./routes/index.js";
import { provideSessionServices } from "./session-services.js";
import { LayeredSettings, readSettingsFile } from "./settings-store.js";
import {
  ensureHome,
  loadOrCreateToken,
  pidAlive,
  readServerInfo,
  removeServerInfo,
  resolveHome,
  type ServerInfo,
  writeServerInfo,
} from "./state.js";
import { warmUp } from "./warm-up.js";

export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

export interface DaemonOptions {
  home?: string;
  host?: string;
  port?: number;
  /** Log to the terminal too (foreground `agentd serve`). */
  foreground?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Extra plugins (the test harness uses this to add plugins without a config file). */
  extraPlugins?: PluginSource[];
  /** Check responses against their schemas (tests). Default: AGENTD_VALIDATE_RESPONSES=1. */
  validateResponses?: boolean;
  /** Skip built-in plugins with these ids (tests of failure containment). */
  builtins?: PluginSource[];
}

export interface Daemon {
  readonly home: string;
  readonly url: string;
  readonly port: number;
  readonly host: string;
  readonly info: ServerInfo;
  readonly plugins: PluginHostType;
  readonly services: ServiceContainer;
  /** Re-reads the token file (after `agentd token --rotate`) and closes open event streams so they re-authenticate. */
  reloadToken(): void;
  /** Whether a model provider is connected (an endpoint or a key is set); first-run hints read it. */
  providerConfigured(): boolean;
  stop(): Promise<void>;
}

export class DaemonStartError extends Error {}

/** Boots the daemon: config, plugins (register, start), HTTP listener, then server.json. */
export async function startDaemon(opts: DaemonOptions = {}): Promise<Daemon> {
  const env = opts.env ?? process.env;
  const home = resolveHome(opts.home, env);
  ensureHome(home);
  const loaded: LoadedConfig = await loadConfig(home, env);
  const cfg = loaded.config;
  const userSettings = readSettingsFile(home);
  const { logger, flush } = createLogger({
    home,
    level: env.AGENTD_LOG_LEVEL ?? cfg.logLevel ?? "info",
    terminal: opts.foreground === true,
  });
  const log = logger;

  const existing = readServerInfo(home);
  if (existing && existing.pid !== process.pid && pidAlive(existing.pid)) {
    throw new DaemonStartError(`agentd is already running for ${home} (pid ${existing.pid}, ${existing.url})`);
  }

  const token = loadOrCreateToken(home);
  const auth = new Authenticator(token);
  const instanceId = randomBytes(18).toString("base64url");
  const startedAt = new Date().toISOString();

  const services = new ServiceContainer();
  const bus = new SyncEventBus(log);
  const registries = createRegistries();
  const settings = new LayeredSettings({
    home,
    version: VERSION,
    config: cfg,
    env,
    defaultCwd: cfg.defaultCwd ?? env.HOME ?? homedir(),
    user: userSettings,
  });
  provideHostServices(services, { log, bus, settings, registries });
  provideSessionServices(services, { home, log, bus, settings, registries });

  // What both plugin hosts (the daemon's and the trusted projects') are given.
  const hostOptions = {
    services,
    registries,
    bus,
    log,
    home,
    ...storageChoice(cfg, env, { daemonId: instanceId, version: VERSION }),
    granted: cfg.pluginCapabilities ?? {},
  };
  const pluginHost = new PluginHost(hostOptions);
  const sources = pluginSources(cfg, home, { builtins: opts.builtins, extra: opts.extraPlugins });
  const builtinIds = new Set(sources.filter((s) => s.origin === "builtin").map((s) => s.manifest.id));

  let projectPlugins: ProjectPlugins | undefined;
  const hub = new SseHub();
  let server: Server | undefined;
  let openApiCache: Record<string, unknown> | undefined;
  registries.routes.onChange(() => {
    openApiCache = undefined;
  });
  const sessions = () => services.get(SessionServiceToken);
  const info = {
    pid: process.pid,
    instanceId,
    version: VERSION,
    startedAt,
    foreground: opts.foreground === true,
    address: () => {
      const a = server?.address() as AddressInfo | null | undefined;
      return a ? { host: a.address, port: a.port, url: `http://${urlHost(a.address)}:${a.port}` } : undefined;
    },
    plugins: () => [...pluginHost.statuses(), ...(projectPlugins?.statuses() ?? [])],
    openApi: () => {
      openApiCache ??= buildOpenApi(registries.routes.entries(), VERSION);
      return openApiCache;
    },
    sseClients: () => hub.size,
    sseQueuedBytes: () => hub.queuedBytes,
    database: () => services.get(SessionStoreToken).status?.() ?? { kind: "custom", connected: true },
    team: () => services.get(SessionStoreToken).turnOwnership,
  };
  const runningCount = () => sessions().turnController.running().length;
  const sandbox = () => services.tryGet(SandboxToken);
  const eventLog = () => services.get(SessionEventLogToken);
  for (const r of hostRoutes({ info, sessions, log: eventLog, running: runningCount, sandbox })) {
    registries.routes.add("host", r);
  }

  await pluginHost.load(sources);
  if (!services.has(SessionStoreToken.id)) {
    throw new DaemonStartError(
      "no session store: the storage-sqlite plugin is disabled or failed, and no other plugin provides the store",
    );
  }
  // The store comes from a plugin: the log reads the feed's position from it before anything is published. A store
  // that cannot open (a database that is unreachable or fails to migrate) stops the daemon with its reason.
  await services
    .get(SessionEventLogToken)
    .open()
    .catch(async (err: unknown) => {
      await pluginHost.stop();
      flush();
      throw new DaemonStartError(err instanceof Error ? err.message : String(err));
    });
  // A database several daemons share keeps the user's settings too: they are read from it before any plugin starts.
  const sharedDocuments = services.get(SessionStoreToken).documents;
  if (sharedDocuments) {
    await settings.attachDocuments(sharedDocuments).catch(async (err: unknown) => {
      await pluginHost.stop();
      flush();
      throw new DaemonStartError(err instanceof Error ? err.message : String(err));
    });
  }
  await pluginHost.start();
  const sessionService = sessions();
  projectPlugins = await startProjectPlugins({
    ...hostOptions,
    takenIds: () => pluginHost.statuses().map((s) => s.id),
  });

  const bindHost = opts.host ?? cfg.server?.host ?? "127.0.0.1";
  const port = opts.port ?? cfg.server?.port ?? DEFAULT_PORT;
  const allowedHosts = new Set((cfg.server?.allowedHosts ?? []).map((h) => h.toLowerCase()));
  if (!isLoopbackAddress(bindHost) && bindHost !== "localhost") {
    allowedHosts.add(bindHost.toLowerCase());
    log.warn(
      { host: bindHost },
      "listening on a non-loopback address: bearer tokens are still accepted from loopback only",
    );
  }
  const app = createApp({
    routes: registries.routes,
    auth,
    log,
    hub,
    allowedHosts,
    maxBodyBytes: cfg.server?.maxBodyBytes ?? 1024 * 1024,
    sseQueueBytes: cfg.server?.sseQueueBytes ?? 1024 * 1024,
    validateResponses: opts.validateResponses ?? env.AGENTD_VALIDATE_RESPONSES === "1",
    version: VERSION,
    knownGoodSchemas: (owner) => owner === "host" || builtinIds.has(owner),
  });
  server = await listen(app, bindHost, port).catch(async (err: Error) => {
    await pluginHost.stop();
    flush();
    throw new DaemonStartError(err.message);
  });
  const addr = info.address();
  if (!addr) throw new DaemonStartError("the listener has no address");
  const serverInfo: ServerInfo = {
    pid: process.pid,
    host: addr.host,
    port: addr.port,
    url: addr.url,
    token,
    instanceId,
    startedAt,
    version: VERSION,
    apiVersion: 1,
  };
  writeServerInfo(home, serverInfo);
  let stopping: Promise<void> | undefined;
  // Not awaited by stop(): a provider's warmUp may be slow; the remaining steps are skipped once stopping.
  void warmUp(app, registries.providers.list(), log, () => stopping !== undefined);
  log.info(
    {
      url: addr.url,
      home,
      plugins: pluginHost.statuses().map((p) => `${p.id}:${p.state}`),
      bootMs: Math.round(process.uptime() * 1000),
    },
    "agentd listening",
  );

  return {
    home,
    url: addr.url,
    port: addr.port,
    host: addr.host,
    info: serverInfo,
    plugins: pluginHost,
    services,
    providerConfigured: () => Boolean(settings.provider.baseURL || settings.provider.apiKey),
    reloadToken() {
      const t = loadOrCreateToken(home);
      auth.setToken(t);
      serverInfo.token = t;
      writeServerInfo(home, serverInfo);
      // Streams were authenticated with the old token: close them; clients reconnect (Last-Event-ID) and re-auth.
      hub.closeAll();
      log.info("access token reloaded");
    },
    stop() {
      stopping ??= (async () => {
        log.info("shutting down");
        await sessionService.turnController
          .abortAll("shutdown")
          .catch((err) => log.error({ err }, "abort on shutdown failed"));
        hub.closeAll();
        const closed = new Promise<void>((resolve) => server?.close(() => resolve()));
        server?.closeAllConnections();
        await closed;
        await services
          .tryGet(SessionEventLogToken)
          ?.close()
          .catch((err) => log.error({ err }, "could not write the last events"));
        await projectPlugins?.unloadAll();
        settings.close();
        await pluginHost.stop();
        await services.dispose();
        removeServerInfo(home, instanceId);
        log.info("stopped");
        flush();
      })();
      return stopping;
    },
  };
}

function urlHost(h: string): string {
  return h.includes(":") ? `[${h}]` : h;
}
