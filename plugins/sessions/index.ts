import {
  definePlugin,
  MessageImagesToken,
  messageImageUrls,
  optional,
  SessionServiceToken,
  SessionStoreToken,
} from "../../core/index.js";
import { sessionRoutes } from "./routes/index.js";

/** Session lifecycle and metadata routes (the turn routes belong to the agent loop plugin). */
export default definePlugin({
  manifest: {
    id: "sessions",
    version: "1.0.0",
    description: "Session lifecycle, metadata, history and the event audit trail",
    capabilities: ["routes"],
  },
  deps: {
    sessions: SessionServiceToken,
    store: SessionStoreToken,
    images: optional(MessageImagesToken),
  },
  register(ctx) {
    const routes = sessionRoutes({
      svc: () => ctx.deps.sessions,
      store: () => ctx.deps.store,
      imageUrls: (apiBase) => messageImageUrls(ctx.deps.images, apiBase),
    });
    for (const r of routes) ctx.routes.add(r);
  },
});
