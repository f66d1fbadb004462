import { definePlugin, T, type ToolContext } from "../../core/index.js";
import { builtinSource } from "../../host/plugin-sources.js";
import { builtinPlugins } from "../../plugins/index.js";
import { startTestDaemon, type TestDaemon } from "../../testing/daemon.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider.js";
import type { SseClient } from "../../testing/sse.js";

/** What the test tools saw: start/end times per call, for ordering and concurrency checks. */
export interface Span {
  name: string;
  label: string;
  start: number;
  end: number;
}

export function probeTools(spans: Span[], gates: Map<string, Promise<void>>) {
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const t = setTimeout(done, ms);
      signal.addEventListener("abort", done);
    });
  const body = (name: string) => async (args: Record<string, unknown>, ctx: ToolContext) => {
    const span = { name, label: String(args.label), start: performance.now(), end: 0 };
    spans.push(span);
    ctx.emit({ type: "probe_started", label: span.label });
    const gate = gates.get(String(args.label));
    if (gate) await Promise.race([gate, sleep(60_000, ctx.signal)]);
    else await sleep(Number(args.ms ?? 0), ctx.signal);
    span.end = performance.now();
    if (ctx.signal.aborted)
      return { content: "stopped", isError: true, error: { code: "aborted", retryable: false, suggestedFix: "" } };
    return { content: `${name}:${args.label}` };
  };
  const parameters = T.Object(
    { label: T.String(), ms: T.Optional(T.Integer({ minimum: 0 })) },
    { additionalProperties: false },
  );
  return definePlugin({
    manifest: { id: "probe-tools", version: "1.0.0", description: "test tools that sleep" },
    register(ctx) {
      ctx.tools.add({
        name: "probe_read",
        description: "read-only sleeper",
        readOnly: true,
        parameters,
        execute: body("probe_read"),
      });
      ctx.tools.add({ name: "probe_write", description: "mutating sleeper", parameters, execute: body("probe_write") });
      ctx.tools.add({
        name: "probe_fail",
        description: "always throws",
        parameters: T.Object({}),
        execute: async () => {
          throw new Error("disk on fire");
        },
      });
    },
  });
}

export const types = (sse: SseClient, from = 0) => sse.frames.slice(from).map((f) => f.json?.type as string);

/** A daemon on the fake provider with the probe tools, one session and its event stream, fresh for each test. */
export function agentLoopFixture() {
  const fx = {} as { fake: FakeProvider; d: TestDaemon; sse: SseClient; id: string };
  const spans: Span[] = [];
  const gates = new Map<string, Promise<void>>();

  beforeEach(async () => {
    spans.length = 0;
    gates.clear();
    fx.fake = await startFakeProvider();
    fx.d = await startTestDaemon({
      config: { provider: { baseURL: fx.fake.url, apiKey: "sk-test", model: "fake-model" } },
      builtins: [...builtinPlugins, probeTools(spans, gates)].map(builtinSource),
    });
    fx.id = await fx.d.createSession();
    fx.sse = await fx.d.sse(`/sessions/${fx.id}/events`);
  });
  afterEach(async () => {
    fx.sse.close();
    await fx.d.cleanup();
    await fx.fake.close();
  });

  const chat = (body: Record<string, unknown>) => fx.d.post(`/sessions/${fx.id}/chat`, body);
  const ends = () => fx.sse.ofType("end");
  const waitEnds = (n: number) => fx.sse.waitFor(() => ends().length >= n, 15_000);
  return { fx, spans, gates, chat, ends, waitEnds };
}
