import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { ApiError, isInside, type Logger, type ProjectTrust, writePrivateFile } from "../../core/index.js";
import { checkHostFields, normaliseHost, type SshHost } from "./validate.js";

export interface ResolvedHost {
  host: SshHost;
  /** Set for a host declared by a (trusted) project. */
  projectRoot?: string;
}

/**
 * SSH keys and hosts in the daemon home: `<home>/ssh/keys/<name>` (0600) and `<home>/ssh/hosts.json` (0600), both
 * in 0700 directories. Project hosts come from `<project>/.agentd/ssh.json`, only for trusted projects.
 */
export class SshStore {
  readonly dir: string;
  readonly keysDir: string;
  readonly hostsFile: string;

  constructor(
    private readonly home: string,
    private readonly log: Logger,
    private readonly trust: () => ProjectTrust | undefined,
  ) {
    this.dir = join(home, "ssh");
    this.keysDir = join(this.dir, "keys");
    this.hostsFile = join(this.dir, "hosts.json");
  }

  /** Creates the directories and refuses to write through a symlink that leaves the daemon home. */
  private ensureDir(dir: string): string {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const real = realpathSync(dir);
    if (!isInside(realpathSync(this.home), real))
      throw new ApiError(500, "The ssh directory resolves outside the daemon home");
    chmodSync(real, 0o700);
    return real;
  }

  saveKey(name: string, key: string): string {
    this.ensureDir(this.dir);
    const dir = this.ensureDir(this.keysDir);
    const file = join(dir, name);
    writePrivateFile(file, key);
    return file;
  }

  keyFile(name: string): string | undefined {
    const file = join(this.keysDir, name);
    return existsSync(file) ? file : undefined;
  }

  globalHosts(): SshHost[] {
    return this.readHosts(this.hostsFile, "global", undefined);
  }

  /** Adds or replaces (same name) a global host. */
  addHost(h: SshHost): SshHost {
    this.ensureDir(this.dir);
    const hosts = this.globalHosts().filter((x) => x.name !== h.name);
    hosts.push(h);
    writePrivateFile(this.hostsFile, `${JSON.stringify({ hosts }, null, 2)}\n`);
    return h;
  }

  /** The trusted project's hosts for a working directory, with the project root ([] when untrusted or none). */
  projectHosts(cwd: string): { root: string; hosts: SshHost[] } | undefined {
    const trust = this.trust();
    if (!trust?.isTrusted(cwd)) return undefined;
    const root = trust.projectRoot(cwd);
    return { root, hosts: this.readHosts(join(root, ".agentd", "ssh.json"), "project", root) };
  }

  /** Project hosts shadow global hosts of the same name (the project is the more specific configuration). */
  hostsFor(cwd: string): ResolvedHost[] {
    const project = this.projectHosts(cwd);
    const out: ResolvedHost[] = (project?.hosts ?? []).map((host) => ({ host, projectRoot: project?.root }));
    const names = new Set(out.map((h) => h.host.name));
    for (const host of this.globalHosts()) if (!names.has(host.name)) out.push({ host });
    return out;
  }

  /**
   * The identity file of a host, or why it cannot be used. `keyPath` must resolve (symlinks followed) into the
   * keys directory, `~/.ssh`, or the project that declared it.
   */
  identity(h: SshHost, projectRoot?: string): { file?: string; problem?: string } {
    if (h.key) {
      const file = this.keyFile(h.key);
      return file
        ? { file }
        : { problem: `the key "${h.key}" of host "${h.name}" is missing (upload it with POST /api/v1/ssh/key)` };
    }
    if (!h.keyPath) return {};
    return (
      this.confineKeyPath(h.keyPath, projectRoot) ?? {
        problem: `the key file of host "${h.name}" is missing or outside the allowed directories`,
      }
    );
  }

  confineKeyPath(keyPath: string, projectRoot?: string): { file: string } | undefined {
    const abs = isAbsolute(keyPath) ? keyPath : projectRoot ? resolve(projectRoot, keyPath) : undefined;
    if (!abs) return undefined;
    let real: string;
    try {
      real = realpathSync(abs);
      if (!statSync(real).isFile()) return undefined;
    } catch {
      return undefined;
    }
    const roots = [this.keysDir, join(homedir(), ".ssh"), ...(projectRoot ? [projectRoot] : [])].flatMap((r) => {
      try {
        return [realpathSync(r)];
      } catch {
        return [];
      }
    });
    return roots.some((r) => isInside(r, real)) ? { file: real } : undefined;
  }

  private readHosts(file: string, where: string, projectRoot: string | undefined): SshHost[] {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT")
        this.log.warn({ file, err: String(err) }, `ignoring an unreadable ${where} ssh host file`);
      return [];
    }
    const list = Array.isArray(raw) ? raw : (raw as { hosts?: unknown } | null)?.hosts;
    if (!Array.isArray(list)) return [];
    const out: SshHost[] = [];
    for (const entry of list) {
      const h = parseHost(entry, projectRoot);
      if (h) out.push(h);
      else this.log.warn({ file }, `skipping an invalid ${where} ssh host entry`);
    }
    return out;
  }
}

/** A host entry from a file (cast's `username`/`keyPath` spellings accepted), or undefined when unsafe. */
export function parseHost(entry: unknown, projectRoot?: string): SshHost | undefined {
  if (!entry || typeof entry !== "object") return undefined;
  const e = entry as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" && v.length > 0 ? v : undefined);
  const name = str(e.name);
  const host = str(e.host);
  if (!name || !host) return undefined;
  const h: SshHost = { name, host: normaliseHost(host), port: e.port === undefined ? 22 : (e.port as number) };
  const user = str(e.user) ?? str(e.username);
  if (user) h.user = user;
  const key = str(e.key);
  if (key) h.key = key;
  const keyPath = str(e.keyPath);
  if (keyPath) h.keyPath = projectRoot && !isAbsolute(keyPath) ? resolve(projectRoot, keyPath) : keyPath;
  try {
    checkHostFields(h);
    if (h.key) checkHostFields({ name: h.key, host: "x" });
  } catch {
    return undefined;
  }
  return h;
}
