import {
  ApiError,
  definePlugin,
  defineRoute,
  optional,
  ProjectTrustToken,
  type ShellClassifier,
  ShellClassifierToken,
  T,
} from "../../core/index.js";
// A pure function shared with the bash tool so both judge commands alike (no plugin instance is involved).
import { SshStore } from "./store.js";
import { createSshTool, DEFAULT_SSH_TOOL_OPTIONS, type SshToolOptions } from "./tool.js";
import {
  checkHostFields,
  HOST_PATTERN,
  NAME_PATTERN,
  normaliseHost,
  normalisePrivateKey,
  type SshHost,
  sanitiseKeyName,
  USER_PATTERN,
} from "./validate.js";

export { SshStore } from "./store.js";
export { createSshTool, type SshToolOptions, sshArgs } from "./tool.js";
export { normalisePrivateKey, type SshHost, sanitiseKeyName } from "./validate.js";

export const SshOptionsSchema = T.Object(
  {
    binary: T.Optional(T.String({ minLength: 1, description: 'The ssh client to run (default "ssh" from PATH)' })),
    timeoutSec: T.Optional(T.Integer({ minimum: 1, maximum: 3600, description: "Default command timeout (180)" })),
    maxOutputBytes: T.Optional(
      T.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, description: "Bytes kept per stream, the tail (131072)" }),
    ),
    connectTimeoutSec: T.Optional(T.Integer({ minimum: 1, maximum: 300, description: "ssh ConnectTimeout (15)" })),
    confirm: T.Optional(
      T.Unsafe<"all" | "dangerous">({
        type: "string",
        enum: ["all", "dangerous"],
        description: 'Which remote commands ask the user first: "all" (default) or only "dangerous" ones',
      }),
    ),
  },
  { additionalProperties: false },
);

const SshKeyRequest = T.Object(
  {
    name: T.String({
      minLength: 1,
      maxLength: 128,
      description: "Key name; reduced to [A-Za-z0-9._-] (other characters become _), the stored file name",
    }),
    key: T.String({
      minLength: 1,
      maxLength: 65_536,
      description: "The private key, PEM or OpenSSH format. Stored with mode 0600; never returned or logged",
    }),
  },
  { title: "SshKeyRequest", additionalProperties: false },
);

const SshKeySchema = T.Object(
  {
    ok: T.Literal(true),
    name: T.String({ description: "The stored key name (after sanitising); use it as `key` in POST /ssh/add" }),
    path: T.String({ description: "Where the key file is" }),
    format: T.String({ description: "openssh, rsa, ec, dsa, pkcs8 or pkcs8-encrypted" }),
  },
  { title: "SshKey" },
);

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

/** Why a remote command needs confirmation (the shell classifier service), or undefined when it looks safe. */
function dangerReason(classifier: ShellClassifier | undefined, command: string): string | undefined {
  if (!classifier) return "it could not be checked (the tools-shell plugin, which classifies commands, is not loaded)";
  const c = classifier.classify(command);
  return c.dangerous ? c.reasons.join("; ") : undefined;
}

/** SSH keys and hosts (global, and per trusted project) and the `ssh` tool. */
export default definePlugin({
  manifest: {
    id: "ssh",
    version: "1.0.0",
    description: "SSH keys and hosts (POST /ssh/key, /ssh/add) and the ssh tool (every remote command is confirmed)",
    capabilities: ["routes", "process", "network"],
    configSchema: SshOptionsSchema,
  },
  deps: {
    trust: optional(ProjectTrustToken),
    classifier: optional(ShellClassifierToken),
  },
  register(ctx) {
    const o = ctx.options;
    const options: SshToolOptions = {
      binary: o.binary ?? DEFAULT_SSH_TOOL_OPTIONS.binary,
      defaultTimeoutSec: o.timeoutSec ?? DEFAULT_SSH_TOOL_OPTIONS.defaultTimeoutSec,
      maxOutputBytes: o.maxOutputBytes ?? DEFAULT_SSH_TOOL_OPTIONS.maxOutputBytes,
      connectTimeoutSec: o.connectTimeoutSec ?? DEFAULT_SSH_TOOL_OPTIONS.connectTimeoutSec,
      confirm: o.confirm ?? DEFAULT_SSH_TOOL_OPTIONS.confirm,
    };
    const store = new SshStore(ctx.home, ctx.log, () => ctx.deps.trust);
    ctx.tools.add(
      createSshTool({
        store,
        options: () => options,
        classify: (command) => dangerReason(ctx.deps.classifier, command),
      }),
    );

    const tags = ["settings"];
    ctx.routes.add(
      defineRoute({
        method: "POST",
        path: "/ssh/key",
        operationId: "addSshKey",
        summary: "Store an SSH private key (mode 0600 in the daemon home); the key is never echoed",
        tags,
        body: SshKeyRequest,
        bodyLimit: 128 * 1024,
        responses: { 200: SshKeySchema },
        handler: ({ body }) => {
          const name = sanitiseKeyName(body.name);
          const { key, format } = normalisePrivateKey(body.key);
          let path: string;
          try {
            path = store.saveKey(name, key);
          } catch (err) {
            if (err instanceof ApiError) throw err;
            ctx.log.error({ name, code: (err as NodeJS.ErrnoException).code }, "could not store an ssh key");
            throw new ApiError(
              500,
              `Could not store the key: ${(err as NodeJS.ErrnoException).code ?? "write failed"}`,
            );
          }
          ctx.log.info({ name, format }, "ssh key stored");
          return { body: { ok: true as const, name, path, format } };
        },
      }),
    );
    ctx.routes.add(
      defineRoute({
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
              throw ApiError.badRequest(
                "keyPath must be an existing file in ~/.ssh or the daemon's ssh keys directory",
              );
            }
            h.keyPath = confined.file;
          }
          store.addHost(h);
          ctx.log.info({ name: h.name, host: h.host, port: h.port }, "ssh host added");
          return { body: { ok: true as const, host: h } };
        },
      }),
    );
  },
});
