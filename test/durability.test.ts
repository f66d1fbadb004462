import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { makeTempHome, spawnDaemon } from "../testing/daemon.js";
import { startFakeProvider, turn } from "../testing/fake-provider.js";
import { storeConfig } from "./support/stress/crash.js";

/** One system call of the trace: when it started and returned, on which file, and its whole line. */
interface Call {
  name: string;
  path: string;
  start: number;
  end: number;
  line: string;
}

/** How strace prints the bytes of an ASCII string: backslashes and quotes escaped. */
const straced = (s: string) => s.replaceAll("\\", "\\\\").replaceAll('"', '\\"');
/** The same string inside a JSON string (a tool's JSON result inside an SSE frame's JSON). */
const inJson = (s: string) => JSON.stringify(s).slice(1, -1);

/** A line's pid (padded with spaces to a column) and the time the call started. */
const TIME = /^(\d+) +(\d\d):(\d\d):(\d\d)\.(\d{6}) /;
const micros = (m: RegExpMatchArray) => ((Number(m[2]) * 60 + Number(m[3])) * 60 + Number(m[4])) * 1e6 + Number(m[5]);

/**
 * Reads `strace -f -tt -T -y` output: one Call per system call, a call split by another thread's (`<unfinished
 * ...>`, then `<... name resumed>`) joined into one.
 */
function parseTrace(text: string): Call[] {
  const calls: Call[] = [];
  const open = new Map<string, Call>();
  for (const line of text.split("\n")) {
    const t = line.match(TIME);
    if (!t) continue;
    const at = micros(t);
    const pid = t[1];
    const rest = line.slice(t[0].length);
    const resumed = rest.match(/^<\.\.\. (\w+) resumed>/);
    if (resumed) {
      const c = open.get(`${pid} ${resumed[1]}`);
      if (!c) continue;
      open.delete(`${pid} ${resumed[1]}`);
      c.end = at;
      c.line += rest;
      calls.push(c);
      continue;
    }
    const head = rest.match(/^(\w+)\(\d+<([^>]*)>/);
    if (!head) continue;
    const c: Call = { name: head[1] as string, path: head[2] as string, start: at, end: at, line: rest };
    if (rest.endsWith("<unfinished ...>")) {
      open.set(`${pid} ${c.name}`, c);
      continue;
    }
    const dur = rest.match(/<(\d+\.\d+)>$/);
    c.end = at + (dur ? Math.round(Number(dur[1]) * 1e6) : 0);
    calls.push(c);
  }
  return calls.sort((a, b) => a.start - b.start);
}

/**
 * A SIGKILL leaves the operating system's cache intact, so the crash suite cannot see whether a message was on disk
 * before a client was told about it; a power loss would. Here the daemon runs under strace, and the order of its
 * system calls shows it: every frame that announces a stored thing (`user_message`, `assistant_message`,
 * `tool_end`) is written to the client's socket only after a sync of the database's WAL that started after that
 * thing's commit was written to the WAL.
 */
describe("durability: a stored message is synced to disk before it is announced", function () {
  this.timeout(90_000);

  for (const store of ["sqlite", "async"] as const) {
    it(`syncs the WAL between a message's commit and the frame that announces it (${store} store)`, async () => {
      const fake = await startFakeProvider();
      const home = makeTempHome("agentd-durable-");
      const trace = join(home, "trace.txt");
      writeFileSync(
        join(home, "config.json"),
        JSON.stringify({ provider: { baseURL: fake.url, apiKey: "sk-test", model: "m" }, ...storeConfig(home, store) }),
      );
      const tag = `t${Date.now().toString(36)}`;
      const strace = ["strace", "-f", "-qq", "-tt", "-T", "-y", "-s", "1000000", "-o", trace];
      strace.push("-e", "trace=write,writev,pwrite64,pwritev,sendmsg,fsync,fdatasync");
      const p = await spawnDaemon(home, {}, 60_000, strace);
      try {
        const id = await p.client.createSession();
        const sse = await p.client.sse(`/sessions/${id}/events`);
        const args = JSON.stringify({ todos: [{ content: "one step", status: "completed" }] });
        // Each text arrives in two deltas, so only the stored message (and frames after it) holds it whole.
        fake.script(
          turn(
            { content: "planning " },
            { content: `${tag} first` },
            { toolCall: { id: "c1", name: "todo_write", arguments: args } },
          ),
          turn({ content: "final " }, { content: `${tag} answer` }),
        );
        const res = await p.client.post(`/sessions/${id}/chat`, { text: `question ${tag} asked` });
        expect(res.status).to.equal(202);
        await sse.waitForType("end", 30_000);
        expect(sse.ofType("assistant_message")).to.have.length(2);
        sse.close();
      } finally {
        process.kill(p.info.pid, "SIGTERM");
        await p.exited;
      }
      try {
        const calls = parseTrace(readFileSync(trace, "utf8"));
        const walWrites = calls.filter((c) => /^pwrite/.test(c.name) && c.path.endsWith(".db-wal"));
        const syncs = calls.filter((c) => /sync$/.test(c.name) && c.path.endsWith(".db-wal"));
        const frames = calls.filter((c) => /^(write|writev|sendmsg)$/.test(c.name) && c.path.startsWith("socket:"));
        const announced = [
          { type: "user_message", text: `question ${tag} asked` },
          { type: "assistant_message", text: `planning ${tag} first` },
          // The tool's result: the todo list it stored, with the count of open ones.
          { type: "tool_end", text: '"remaining":0' },
          { type: "assistant_message", text: `final ${tag} answer` },
        ];
        for (const { type, text } of announced) {
          // A message's text is stored as it is, or inside JSON (a tool's result).
          const commit = walWrites.find(
            (c) => c.line.includes(straced(text)) || c.line.includes(straced(inJson(text))),
          );
          const frame = frames.find(
            (c) => c.line.includes(straced(`"type":"${type}"`)) && c.line.includes(straced(inJson(text))),
          );
          expect(commit, `the commit of the ${type} "${text}" in the WAL`).to.not.equal(undefined);
          expect(frame, `the ${type} frame "${text}" on a client socket`).to.not.equal(undefined);
          const c = commit as Call;
          const f = frame as Call;
          expect(c.end, `${type} committed before it was announced`).to.be.at.most(f.start);
          const synced = syncs.some((s) => s.start >= c.end && s.end <= f.start);
          expect(synced, `a WAL sync between the commit of the ${type} "${text}" and its frame`).to.equal(true);
        }
      } finally {
        await fake.close();
        rmSync(home, { recursive: true, force: true });
      }
    });
  }
});
