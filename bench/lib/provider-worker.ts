/** Worker thread running the fake provider, so that serving the load's streams does not use the daemon's thread. */
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider.js";
import { serveRpc } from "./rpc.js";
import { stampedTurn } from "./streams.js";

let fake: FakeProvider | undefined;
const sent = new Map<string, Float64Array>();

const lastUserText = (body: { messages: Array<{ role: string; content?: unknown }> }) => {
  const last = body.messages.at(-1);
  return last?.role === "user" && typeof last.content === "string" ? last.content : undefined;
};

serveRpc({
  async start() {
    fake = await startFakeProvider();
    return fake.url;
  },
  /** Scripts one stamped n-token answer per key, given to the chat request whose last user message is the key. */
  script(args: { keys: string[]; n: number; gapMs: number }) {
    for (const key of args.keys) {
      const t = stampedTurn(args.n, args.gapMs);
      sent.set(key, t.sent);
      fake?.scriptFor((b) => lastUserText(b) === key, t.turn);
    }
    return true;
  },
  /** The body of the last chat request the provider received (to replay it directly as a baseline). */
  lastBody() {
    return fake?.requests.at(-1);
  },
  stamps(args: { keys: string[] }) {
    return args.keys.map((k) => sent.get(k));
  },
  async close() {
    await fake?.close();
    return true;
  },
});
