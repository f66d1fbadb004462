import { join } from "node:path";
import { DocumentStoreToken, FileDocuments } from "../core/documents.js";
import { SessionEventLog } from "../core/event-log.js";
import type { EventBus, Logger } from "../core/index.js";
import { ProjectContextToken } from "../core/project.js";
import { SessionServiceToken } from "../core/session-service.js";
import { SessionEventLogToken, SessionManager } from "../core/sessions.js";
import { SharedEventLog } from "../core/shared-event-log.js";
import { SessionStoreToken } from "../core/store.js";
import { TurnControllerToken } from "../core/turns.js";
import { WorktreeServiceToken } from "../core/worktrees.js";
import type { ServiceContainer } from "./container.js";
import type { Registries } from "./loader.js";
import type { LayeredSettings } from "./settings-store.js";

/**
 * Provides what stands on the session store a plugin brings: the documents, the event log and the session
 * service. Lazily: the store exists only once the storage plugin has registered.
 */
export function provideSessionServices(
  services: ServiceContainer,
  host: { home: string; log: Logger; bus: EventBus; settings: LayeredSettings; registries: Registries },
): void {
  const { home, log, bus, settings, registries } = host;
  // The documents (settings, approval rules, trust decisions) live in a store several daemons share, when it keeps
  // them; else they are files in the home.
  services.provideLazy(DocumentStoreToken, () => services.get(SessionStoreToken).documents ?? new FileDocuments(home));
  // A store several daemons share numbers the events itself (SharedEventLog); else they are numbered in memory.
  services.provideLazy(SessionEventLogToken, () => {
    const store = services.get(SessionStoreToken);
    return store.sharedEvents
      ? new SharedEventLog(store, store.sharedEvents, bus, log)
      : new SessionEventLog(store, bus, log);
  });
  services.provideLazy(SessionServiceToken, () => {
    const svc = new SessionManager(
      services.get(SessionStoreToken),
      services.get(SessionEventLogToken),
      bus,
      registries.personas,
      {
        model: () => settings.provider.model ?? "default",
        persona: () => settings.defaultPersona,
        meta: () => ({
          ...(settings.permissionMode === "bypass" ? { permissionMode: "bypass" } : {}),
          ...(settings.reasoning ? { reasoningEffort: settings.reasoning } : {}),
        }),
        cwd: settings.defaultCwd,
        sandboxRoot: join(home, "sandbox"),
      },
      {
        turns: () => services.tryGet(TurnControllerToken),
        project: () => services.tryGet(ProjectContextToken),
        worktrees: () => services.tryGet(WorktreeServiceToken),
      },
    );
    return svc;
  });
}
