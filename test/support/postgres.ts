import { execFile, execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { PostgresSessionStore } from "../../plugins/storage-postgres/store.js";

/**
 * A throwaway PostgreSQL cluster for the tests: Debian's postgresql (the binaries under /usr/lib/postgresql/<n>/bin,
 * or AGENTD_PG_BIN), `initdb` in a temporary directory, a free port on 127.0.0.1, fsync off. One per test process,
 * started on first use and removed when the process exits. As root the server runs as the `postgres` user
 * (`initdb` refuses root). Without PostgreSQL installed it throws, and the tests that need it fail: they never skip.
 */
export interface PgCluster {
  readonly port: number;
  readonly dir: string;
  /** postgres://postgres@127.0.0.1:<port>/<db> */
  url(db: string): string;
  /**
   * Creates a database and returns its URL: empty, or with `migrated` a copy of one the store has already brought to
   * the current schema (what a daemon finds on a database another one set up; quicker than migrating each).
   */
  createDatabase(name?: string, opts?: { migrated?: boolean }): Promise<string>;
  /** Stops the server (`pg_ctl stop -m fast`), keeping the data: a test of a database that went away. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

let cluster: Promise<PgCluster> | undefined;
let counter = 0;

export function pgCluster(): Promise<PgCluster> {
  cluster ??= startCluster();
  return cluster;
}

function binDir(): string {
  const explicit = process.env.AGENTD_PG_BIN;
  if (explicit) return explicit;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? execFileSync("ls", [root], { encoding: "utf8" })
        .split("\n")
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const v = versions.find((n) => existsSync(join(root, n, "bin", "initdb")));
  if (!v) {
    throw new Error(
      "PostgreSQL is not installed (no /usr/lib/postgresql/<version>/bin/initdb): apt-get install postgresql",
    );
  }
  return join(root, v, "bin");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function startCluster(): Promise<PgCluster> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "agentd-pg-"));
  const data = join(dir, "data");
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const run = (cmd: string, args: string[]) => {
    const argv = asRoot ? ["-u", "postgres", "--", join(bin, cmd), ...args] : args;
    const res = spawnSync(asRoot ? "runuser" : join(bin, cmd), argv, { encoding: "utf8", cwd: dir });
    if (res.status !== 0) {
      throw new Error(`${cmd} failed (${res.status ?? res.signal}): ${res.stderr || res.stdout}`.trim());
    }
  };
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"]);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=300",
    "-c shared_buffers=32MB",
  ].join(" ");
  const log = join(dir, "server.log");
  // Stopping and starting the server while daemons run in this process never blocks the event loop (a daemon's
  // keep-alive timers would then all fire at once, under the requests the test makes next).
  const runAsync = async (cmd: string, args: string[]) => {
    const argv = asRoot ? ["-u", "postgres", "--", join(bin, cmd), ...args] : args;
    try {
      await promisify(execFile)(asRoot ? "runuser" : join(bin, cmd), argv, { encoding: "utf8", cwd: dir });
    } catch (err) {
      const e = err as { code?: number; stderr?: string; stdout?: string };
      throw new Error(`${cmd} failed (${e.code}): ${e.stderr || e.stdout}`.trim());
    }
  };
  const startArgs = ["-D", data, "-o", options, "-l", log, "-w", "-t", "60", "start"];
  const logTail = (err: unknown) =>
    new Error(`${(err as Error).message}\n${existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : ""}`);
  try {
    run("pg_ctl", startArgs);
  } catch (err) {
    throw logTail(err);
  }
  let running = true;
  process.once("exit", () => {
    if (running)
      spawnSync(asRoot ? "runuser" : join(bin, "pg_ctl"), [
        ...(asRoot ? ["-u", "postgres", "--", join(bin, "pg_ctl")] : []),
        "-D",
        data,
        "-m",
        "immediate",
        "-w",
        "stop",
      ]);
    rmSync(dir, { recursive: true, force: true });
  });
  const url = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  return {
    port,
    dir,
    url,
    async createDatabase(name = `agentd_${process.pid}_${++counter}`, opts = {}) {
      const template = opts.migrated ? await migratedTemplate(url) : "template0";
      await admin(url, `CREATE DATABASE "${name.replaceAll('"', "")}" TEMPLATE ${template}`);
      return url(name);
    },
    async stop() {
      await runAsync("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      running = false;
    },
    async start() {
      await runAsync("pg_ctl", startArgs).catch((err) => {
        throw logTail(err);
      });
      running = true;
    },
  };
}

async function admin(url: (db: string) => string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url("postgres") });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

let template: Promise<string> | undefined;

/** A database migrated by the store once, the template of the `migrated` databases. */
function migratedTemplate(url: (db: string) => string): Promise<string> {
  template ??= (async () => {
    const name = "agentd_migrated_template";
    await admin(url, `CREATE DATABASE ${name} TEMPLATE template0`);
    const store = new PostgresSessionStore({ url: url(name) });
    try {
      await store.opened();
    } finally {
      await store.close();
    }
    return name;
  })();
  return template;
}
