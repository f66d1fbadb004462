import type { SessionRecord, SessionStore } from "../../../core/index.js";

/** What the share routes use: the store, and the page of a session as its link shows it (or would show it). */
export interface ShareRouteDeps {
  store: () => SessionStore;
  page: (rec: SessionRecord, toolResults: boolean, preview: boolean) => Promise<string>;
}
