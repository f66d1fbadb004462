import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { expect } from "chai";
import { HttpSseStream } from "../host/http/sse.js";

/**
 * A response whose socket never drains (a stalled client) and records what it was given to write: the headers'
 * first write through the response, every frame after it straight to the socket.
 */
function stalledResponse(): { res: ServerResponse; chunks: Buffer[] } {
  const chunks: Buffer[] = [];
  const record = (chunk: string | Buffer) => {
    const b = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    chunks.push(b);
    socket.writableLength += b.length;
    return false;
  };
  const socket = Object.assign(new EventEmitter(), {
    writableLength: 0,
    writableNeedDrain: true,
    cork() {},
    uncork() {},
    write: record,
  });
  const res = Object.assign(new EventEmitter(), {
    socket,
    writeHead() {
      return res;
    },
    write: record,
    end() {},
  });
  Object.defineProperty(res, "writableLength", { get: () => socket.writableLength });
  return { res: res as unknown as ServerResponse, chunks };
}

const flushTick = () => new Promise<void>((r) => process.nextTick(r));

/** Issue 14, defect 7: a large frame is held once for all stalled clients, never copied per client. */
describe("SSE frames for stalled clients", () => {
  const big = JSON.stringify({ type: "assistant_message", sessionId: "s1", seq: 7, content: "x".repeat(300_000) });

  it("writes a large frame queued behind a small one without joining (copying) it per client", async () => {
    const clients = Array.from({ length: 5 }, () => stalledResponse());
    const streams = clients.map((c) => new HttpSseStream(c.res, undefined, 1024 * 1024, {}));
    for (const s of streams) {
      expect(s.send('{"type":"token"}', 6)).to.equal(true);
      expect(s.send(big, 7)).to.equal(true);
    }
    await flushTick();
    const largest = clients.map((c) => c.chunks.reduce((a, b) => (b.length > a.length ? b : a)));
    for (const b of largest) expect(b).to.equal(largest[0]);
  });

  it("shares a large frame between clients caught up from the log at different moments", async () => {
    const a = stalledResponse();
    const b = stalledResponse();
    const sa = new HttpSseStream(a.res, undefined, 1024 * 1024, {});
    const sb = new HttpSseStream(b.res, undefined, 1024 * 1024, {});
    sa.send(`${big.slice(0, -1)}}`, 7);
    sa.send('{"type":"other"}', 8);
    // The log gives every reader its own copy of the JSON string: the bytes written must still be one Buffer.
    sb.send(`${big.slice(0, -1)}}`, 7);
    await flushTick();
    const largestA = a.chunks.reduce((x, y) => (y.length > x.length ? y : x));
    const largestB = b.chunks.reduce((x, y) => (y.length > x.length ? y : x));
    expect(largestB).to.equal(largestA);
  });

  it("refuses a frame larger than the queue bound while anything is queued", async () => {
    const c = stalledResponse();
    const s = new HttpSseStream(c.res, undefined, 64 * 1024, {});
    expect(s.send('{"type":"token"}', 1)).to.equal(true);
    await flushTick();
    expect(s.send(big, 2)).to.equal(false);
  });
});
