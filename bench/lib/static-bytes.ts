/**
 * The floor of a read as a client meets it: plain `node:http`, nothing else loaded, answering `GET /<i>` with the
 * bytes of the i-th file given, read once at the start, with the daemon's JSON headers. Sections 4b and 8b serve the
 * very answers `agentd serve` gave (bench/floor.ts), so a client's time against it is what reading and parsing them
 * costs, without a daemon.
 *
 * Run as `node static-bytes.js <readyFile> <file>...`: it writes `{port}` to readyFile once listening.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";

const [readyFile, ...files] = process.argv.slice(2) as [string, ...string[]];
const bodies = files.map((f) => readFileSync(f));

const server = createServer((req, res) => {
  const body = bodies[Number((req.url ?? "").slice(1))];
  if (!body) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": body.byteLength,
    "Cache-Control": "no-store",
  });
  res.end(body);
});

server.listen(0, "127.0.0.1", () => {
  const addr = server.address();
  writeFileSync(`${readyFile}.tmp`, JSON.stringify({ port: typeof addr === "object" && addr ? addr.port : 0 }));
  renameSync(`${readyFile}.tmp`, readyFile);
});
process.on("SIGTERM", () => process.exit(0));
