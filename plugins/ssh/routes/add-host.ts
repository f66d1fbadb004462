import { ApiError, defineRoute, T } from "../../../core/index.js";
import { checkHostFields, HOST_PATTERN, NAME_PATTERN, normaliseHost, type SshHost, USER_PATTERN } from "../validate.js";
import { type SshRouteDeps, tags } from "./shared.js";

const SshHostRequest = T.Object(
  {
    name: T.String({ pattern: NAME_PATTERN, description: "Name the ssh tool uses for this host" }),
    host: T.String({ minLength: 1, maxLength: 255, pattern: HOST_PATTERN, description: "Hostname or IP address" }),
    user: T.Optional(T.String({ pattern: USER_PATTERN, description: "Remote user (default: ssh's default)" })),
    username: T.Optional(
      T.String({ pattern: USER_PATTERN, description: "Alias of user (the original daemon's name)" }),
    ),
    port: T.Optional(T.Integer({ minimum: 1, maximum: 65535, description: "Default 22" })),
    key: T.Optional(T.String({ pattern: NAME_PATTERN, description: "Name of a key stored with POST /ssh/key" })),
    keyPath: T.Optional(
      T.String({
        minLength: 1,
        maxLength: 4096,
        description: "Absolute path of an identity file in ~/.ssh or the ssh keys directory",
      }),
    ),
  },
  { title: "SshHostRequest", additionalProperties: false },
);

const SshHostSchema = T.Object(
  {
    name: T.String(),
    host: T.String(),
    user: T.Optional(T.String()),
    port: T.Integer(),
    key: T.Optional(T.String()),
    keyPath: T.Optional(T.String()),
  },
  { title: "SshHost" },
);

export function addHostRoute({ store, log }: SshRouteDeps) {
  return defineRoute({
    method: "POST",
    path: "/ssh/add",
    operationId: "addSshHost",
    summary: "Add (or replace, by name) an SSH host for the ssh tool",
    tags,
    body: SshHostRequest,
    bodyLimit: 16 * 1024,
    responses: { 200: T.Object({ ok: T.Literal(true), host: SshHostSchema }, { title: "SshHostAdded" }) },
    handler: ({ body }) => {
      if (body.user && body.username && body.user !== body.username) {
        throw ApiError.badRequest("user and username differ; give one of them");
      }
      if (body.key && body.keyPath) throw ApiError.badRequest("give key or keyPath, not both");
      const h: SshHost = { name: body.name, host: normaliseHost(body.host), port: body.port ?? 22 };
      const user = body.user ?? body.username;
      if (user) h.user = user;
      checkHostFields(h);
      if (body.key) {
        if (!store.keyFile(body.key))
          throw ApiError.badRequest(`Unknown key "${body.key}"; store it first with POST /api/v1/ssh/key`);
        h.key = body.key;
      }
      if (body.keyPath) {
        const confined = store.confineKeyPath(body.keyPath);
        if (!confined) {
          throw ApiError.badRequest("keyPath must be an existing file in ~/.ssh or the daemon's ssh keys directory");
        }
        h.keyPath = confined.file;
      }
      store.addHost(h);
      log.info({ name: h.name, host: h.host, port: h.port }, "ssh host added");
      return { body: { ok: true as const, host: h } };
    },
  });
}
