import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
const res = {};
for (let i = 0; i < 5; i++) for (const entry of ["dist/host/main.js", "dist/host/main.bundle.js"]) {
  const home = mkdtempSync(join(tmpdir(), "cold-"));
  const t0 = performance.now();
  const child = spawn(process.execPath, [entry, "serve", "--port", "0", "--home", home], { env: { ...process.env, AGENTD_LOG_LEVEL: "warn" }, stdio: ["ignore", "ignore", "pipe"] });
  let err = ""; child.stderr.on("data", (d) => (err += d));
  while (!existsSync(join(home, "server.json"))) { if (child.exitCode !== null) { console.log(entry, "EXIT", err.slice(0, 800)); process.exit(1); } await new Promise((r) => setTimeout(r, 2)); }
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 500));
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
  (res[entry] ??= []).push(`${ms.toFixed(0)}ms/${(m[1] / 1024).toFixed(0)}MiB`);
  child.kill("SIGTERM"); await new Promise((r) => child.once("exit", r));
}
console.log(res);
