import { homedir } from "node:os";
import path from "node:path";
import {
  definePlugin,
  HostInfoToken,
  MessageImagesToken,
  SessionServiceToken,
  SessionStoreToken,
  type Static,
  T,
} from "../../core/index.js";
import { resolveRoots } from "./browse.js";
import { messageImages } from "./image.js";
import { removeSessionInputs } from "./inputs.js";
import { filesRoutes } from "./routes/index.js";

export { candidateName } from "./inputs.js";
export { BLOCKED_EXTENSIONS, executableFormat, sanitizeName } from "./upload-policy.js";

export const DEFAULT_MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

export const FilesOptionsSchema = T.Object(
  {
    maxUploadBytes: T.Optional(
      T.Integer({
        minimum: 1,
        maximum: 512 * 1024 * 1024,
        description: `Largest attachment accepted, decoded bytes (default ${DEFAULT_MAX_UPLOAD_BYTES}, 25 MiB)`,
      }),
    ),
    browseRoots: T.Optional(
      T.Array(T.String({ minLength: 1, pattern: "^/" }), {
        description:
          "Absolute directories DELETE /browse and /browse/mkdir may act in, and the directory picker's starting " +
          "points (default: the user's home directory and the daemon's default working directory)",
      }),
    ),
    browseAnywhere: T.Optional(
      T.Boolean({
        description:
          "GET /browse lists any directory the daemon's user can read (default true); false confines it to browseRoots",
      }),
    ),
  },
  { additionalProperties: false },
);
export type FilesOptions = Static<typeof FilesOptionsSchema>;

/**
 * Session files (the session's working directory), attachments (`<home>/inputs/<session id>/`), the directory
 * browser and message images. Every path is confined with realpath; nothing is ever overwritten.
 */
export default definePlugin({
  manifest: {
    id: "files",
    version: "1.0.0",
    description: "Session files, attachments, directory browsing and message images",
    provides: [MessageImagesToken.id],
    capabilities: ["routes", "filesystem"],
    configSchema: FilesOptionsSchema,
  },
  deps: {
    sessions: SessionServiceToken,
    store: SessionStoreToken,
    host: HostInfoToken,
  },
  register(ctx) {
    const options = ctx.options;
    const sessions = () => ctx.deps.sessions;
    const inputsRoot = path.join(ctx.home, "inputs");
    const configuredRoots = () => options.browseRoots ?? [homedir(), ctx.deps.host.defaultCwd];

    const routes = filesRoutes({
      sessions,
      store: () => ctx.deps.store,
      inputs: { sessions, inputsRoot, maxUploadBytes: options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES },
      browse: {
        roots: () => resolveRoots(configuredRoots()),
        anywhere: () => options.browseAnywhere !== false,
      },
    });
    for (const r of routes) ctx.routes.add(r);
    // Display code (GET /sessions/{id}, /history) links stored images here, without knowing this plugin's routes.
    ctx.services.provide(MessageImagesToken, messageImages);

    ctx.events.on("session.deleted", ({ sessionId }) => {
      try {
        removeSessionInputs(inputsRoot, sessionId);
      } catch (err) {
        ctx.log.warn({ err, sessionId }, "could not remove the attachments of a deleted session");
      }
    });
  },
});
