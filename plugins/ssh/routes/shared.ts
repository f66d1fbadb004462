import type { Logger } from "../../../core/index.js";
import type { SshStore } from "../store.js";

/** What the ssh routes use. */
export interface SshRouteDeps {
  store: SshStore;
  log: Logger;
}

export const tags = ["settings"];
