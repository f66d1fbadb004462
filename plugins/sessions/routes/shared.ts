import type { MessageImageUrl, SessionService, SessionStore } from "../../../core/index.js";

/** What the session routes use. */
export interface SessionRouteDeps {
  svc: () => SessionService;
  store: () => SessionStore;
  /** Stored images link to whichever plugin serves them (the files plugin); without one they are left out. */
  imageUrls: (apiBase: string) => MessageImageUrl | undefined;
}

export const tags = ["sessions"];
