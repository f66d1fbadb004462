/**
 * `agentd acp`: an Agent Client Protocol agent on stdin/stdout. stdout carries protocol messages only, so every
 * console method is pointed at stderr before anything else runs.
 */
import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import { AcpAgent } from "./agent.js";

export async function runAcp(opts: { home?: string } = {}): Promise<void> {
  const toStderr = (...args: unknown[]) => process.stderr.write(`${args.map(String).join(" ")}\n`);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.warn = toStderr;
  const log = (msg: string) => process.stderr.write(`agentd acp: ${msg}\n`);
  const acp = new AcpAgent({ home: opts.home, log });
  const stream = ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const connection = acp.app().connect(stream);
  const stop = () => connection.close();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  await connection.closed.catch((err: unknown) => log(`connection closed: ${(err as Error).message}`));
  await acp.shutdown();
  process.exit(0);
}
