/**
 * Writes the versioned OpenAPI snapshot (docs/openapi/v1.json) from the exact object a freshly started daemon
 * serves at GET /api/v1/openapi.json. `npm run openapi:snapshot`; a test fails when the two differ.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { startTestDaemon } from "../testing/daemon.js";

export const SNAPSHOT_FILE = fileURLToPath(new URL("../../docs/openapi/v1.json", import.meta.url));

export async function servedOpenApi(): Promise<unknown> {
  const d = await startTestDaemon();
  try {
    const res = await d.get("/openapi.json", { auth: false });
    if (res.status !== 200) throw new Error(`GET /openapi.json: ${res.status}`);
    return res.body;
  } finally {
    await d.cleanup();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const doc = await servedOpenApi();
  mkdirSync(dirname(SNAPSHOT_FILE), { recursive: true });
  rmSync(SNAPSHOT_FILE, { force: true });
  writeFileSync(SNAPSHOT_FILE, `${JSON.stringify(doc, null, 2)}\n`);
  process.stdout.write(`wrote ${SNAPSHOT_FILE}\n`);
}
