import { ApiError, defineRoute, T } from "../../../core/index.js";
import { normalisePrivateKey, sanitiseKeyName } from "../validate.js";
import { type SshRouteDeps, tags } from "./shared.js";

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

export function addKeyRoute({ store, log }: SshRouteDeps) {
  return defineRoute({
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
        log.error({ name, code: (err as NodeJS.ErrnoException).code }, "could not store an ssh key");
        throw new ApiError(500, `Could not store the key: ${(err as NodeJS.ErrnoException).code ?? "write failed"}`);
      }
      log.info({ name, format }, "ssh key stored");
      return { body: { ok: true as const, name, path, format } };
    },
  });
}
