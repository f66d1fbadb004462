import { homedir } from "node:os";
import {
  definePlugin,
  PersonaRegistryToken,
  type SessionRecord,
  SessionStoreToken,
  T,
  toDisplayMessages,
} from "../../core/index.js";
import { shareMarkdown } from "./markdown.js";
import { renderSharePage } from "./page.js";
import { shareRoutes } from "./routes/index.js";

export { escapeHtml, renderSharePage, SHARE_CSP } from "./page.js";

export const ShareOptionsSchema = T.Object(
  {
    toolResults: T.Optional(
      T.Boolean({
        description:
          "Tool results (file contents, command output) may be shown on shared pages when the one sharing chooses " +
          "so (POST /sessions/{id}/share {toolResults: true}); false: never (default true)",
      }),
    ),
    maxTurns: T.Optional(
      T.Integer({ minimum: 1, maximum: 100_000, description: "Most recent user turns shown (default 500)" }),
    ),
  },
  { additionalProperties: false },
);

/** Replaces the session directory and the user's home in shown text, so a shared page does not map the machine. */
export function pathRedactor(cwd: string, home: string = homedir()): (s: string) => string {
  const pairs: Array<[string, string]> = [];
  if (cwd.length > 1) pairs.push([cwd, "<project>"]);
  if (home.length > 1 && home !== cwd) pairs.push([home, "~"]);
  return (s) => {
    let out = s;
    for (const [from, to] of pairs) out = out.split(from).join(to);
    return out;
  };
}

/**
 * The public, read-only page of a shared session (`POST /sessions/{id}/share` creates the link). No auth: the
 * unguessable token is the credential, and revoking it makes the page 404 at once.
 */
export default definePlugin({
  manifest: {
    id: "share",
    version: "1.0.0",
    description: "Public read-only HTML page of shared sessions (GET /shared/{token})",
    capabilities: ["routes", "public-routes", "pages"],
    configSchema: ShareOptionsSchema,
  },
  deps: {
    store: SessionStoreToken,
    personas: PersonaRegistryToken,
  },
  register(ctx) {
    const options = ctx.options;
    /** The page of a session as its link shows it (or, for its owner, would show it). */
    const page = async (rec: SessionRecord, toolResults: boolean, preview: boolean) => {
      const store = ctx.deps.store;
      const history = await store.historyPage(rec.id, options.maxTurns ?? 500);
      // The image "URLs" are only keys for inlining (the page resolves them to the stored data, never links).
      const messages = toDisplayMessages(history.messages, rec.id, (_id, seq, idx) => `?seq=${seq}&idx=${idx}`);
      const persona = ctx.deps.personas.get(rec.persona)?.label ?? rec.persona;
      return renderSharePage({
        title: rec.title || "Shared session",
        persona,
        model: rec.model,
        createdAt: rec.createdAt,
        updatedAt: rec.updatedAt,
        messages,
        rows: history.messages,
        hasMoreHistory: history.hasMoreHistory,
        toolResults: toolResults && options.toolResults !== false,
        redact: pathRedactor(rec.cwd),
        markdown: await shareMarkdown(),
        preview,
      });
    };
    for (const r of shareRoutes({ store: () => ctx.deps.store, page })) ctx.routes.add(r);
  },
});
