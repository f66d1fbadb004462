import { ApiError } from "../../core/index.js";

/**
 * Everything that ends up on the ssh command line is checked against these patterns: no spaces, no shell
 * metacharacters, and never a leading "-" (which ssh would read as an option, e.g. `-oProxyCommand=...`).
 */
export const NAME_PATTERN = "^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$";
export const HOST_PATTERN = "^([A-Za-z0-9_][A-Za-z0-9._-]{0,252}|\\[?[0-9A-Fa-f]*:[0-9A-Fa-f:.]*\\]?)$";
export const USER_PATTERN = "^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$";

const NAME_RE = new RegExp(NAME_PATTERN);
const HOST_RE = new RegExp(HOST_PATTERN);
const USER_RE = new RegExp(USER_PATTERN);

/** A configured host as stored (`<home>/ssh/hosts.json`) or read from a trusted project's `.agentd/ssh.json`. */
export interface SshHost {
  name: string;
  host: string;
  user?: string;
  port: number;
  /** Name of a key uploaded with POST /ssh/key. */
  key?: string;
  /** Absolute path of an identity file (confined to the allowed key directories). */
  keyPath?: string;
}

/** The host part as ssh wants it: IPv6 without brackets (`user@::1` is valid, `-p` carries the port). */
export function normaliseHost(host: string): string {
  return host.replace(/^\[|\]$/g, "");
}

/** Throws a readable 400 when a field would be unsafe on the ssh command line. */
export function checkHostFields(h: { name: string; host: string; user?: string; port?: number }): void {
  if (!NAME_RE.test(h.name))
    throw ApiError.badRequest(
      "name may use only letters, digits, '.', '_' and '-' (max 64), not starting with '.' or '-'",
    );
  if (!HOST_RE.test(h.host)) {
    throw ApiError.badRequest("host must be a hostname or IP address: no spaces, shell metacharacters or leading '-'");
  }
  if (h.user !== undefined && !USER_RE.test(h.user)) {
    throw ApiError.badRequest("user may use only letters, digits, '.', '_' and '-', not starting with '.' or '-'");
  }
  if (h.port !== undefined && (!Number.isInteger(h.port) || h.port < 1 || h.port > 65535)) {
    throw ApiError.badRequest("port must be an integer from 1 to 65535");
  }
}

/**
 * Reduces a requested key name to `[A-Za-z0-9._-]` (other characters become "_"), without a leading dot or dash,
 * so it is always a plain file name inside the keys directory.
 */
export function sanitiseKeyName(raw: string): string {
  const name = raw
    .trim()
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^[.-]+/, "")
    .slice(0, 64);
  if (!name || !NAME_RE.test(name)) throw ApiError.badRequest("name must contain at least one letter or digit");
  return name;
}

const PEM_RE =
  /^-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?)PRIVATE KEY-----\n((?:[A-Za-z0-9-]+: [^\n]*\n)*\n?)([A-Za-z0-9+/=\n]+)\n-----END \1PRIVATE KEY-----$/;

/**
 * Checks that `text` is a PEM or OpenSSH private key and returns it normalised (LF line ends, one trailing newline,
 * which OpenSSH requires). Error messages never quote the input.
 */
export function normalisePrivateKey(text: string): { key: string; format: string } {
  const key = text.replace(/\r\n?/g, "\n").trim();
  if (/^(ssh-|ecdsa-|sk-)\S+ AAAA/.test(key) || /-----BEGIN (SSH2 |RSA )?PUBLIC KEY-----/.test(key)) {
    throw ApiError.badRequest("key is a public key; upload the private key (the file without .pub)");
  }
  if (key.startsWith("PuTTY-User-Key-File")) {
    throw ApiError.badRequest("key is a PuTTY .ppk file; convert it with `puttygen key.ppk -O private-openssh`");
  }
  const m = PEM_RE.exec(key);
  if (!m) {
    throw ApiError.badRequest(
      "key must be a private key in PEM or OpenSSH format (-----BEGIN ... PRIVATE KEY----- ... -----END ... PRIVATE KEY-----)",
    );
  }
  const kind = (m[1] ?? "").trim().toLowerCase();
  return { key: `${key}\n`, format: kind ? (kind === "encrypted" ? "pkcs8-encrypted" : kind) : "pkcs8" };
}
