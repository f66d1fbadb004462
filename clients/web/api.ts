/** The daemon's /api/v1, typed from the published OpenAPI document; the browser signs in with its cookie. */
import { type ApiCallError, createApi, ok, type Schemas } from "../api/client.js";
import { online } from "./store.js";

export type { ApiCallError, Schemas };
export type Session = Schemas["Session"];
export type SessionSummary = Schemas["SessionSummary"];
export type DisplayMessage = Schemas["DisplayMessage"];

/** Every call goes through here: a 401 means the cookie expired (back to /login), a network error means offline. */
const guardedFetch: typeof fetch = async (input, init) => {
  try {
    const res = await fetch(input, { ...init, credentials: "same-origin" });
    online.value = true;
    if (res.status === 401) location.assign("/login");
    return res;
  } catch (err) {
    online.value = false;
    throw err;
  }
};

export const api = createApi({ baseUrl: "", fetch: guardedFetch });
export { ok };

/** A readable message for anything a call can throw. */
export function messageOf(err: unknown): string {
  // fetch's own wording for a refused connection says nothing to a person.
  if (err instanceof TypeError && /fetch|network/i.test(err.message)) return "The daemon is unreachable.";
  return err instanceof Error ? err.message : String(err);
}
