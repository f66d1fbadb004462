import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { type PluginContext, silentLogger, type ToolDefinition } from "../core/index.js";
import shellPlugin from "../plugins/tools-shell/index.js";
import { alive, errorOf, toolCtx } from "./support/tools-shell.js";
import { SANDBOX_OFF } from "./support/unconfined-shell.js";

describe("tools-shell: plugin", () => {
  function register(options: Record<string, unknown> = {}) {
    const tools: ToolDefinition[] = [];
    const disposers: Array<() => void> = [];
    const handlers = new Map<string, (payload: never) => void>();
    const noop = { dispose() {} };
    const ctx = {
      id: "tools-shell",
      manifest: shellPlugin.manifest,
      log: silentLogger,
      options,
      home: tmpdir(),
      dataDir: () => tmpdir(),
      routes: { add: () => noop },
      tools: {
        add: (t: ToolDefinition) => {
          tools.push(t);
          return noop;
        },
      },
      personas: { add: () => noop },
      themes: { add: () => noop },
      commands: { add: () => noop },
      providers: { add: () => noop },
      services: {
        provide: () => noop,
        provideClass: () => noop,
        get: () => expect.fail("no services"),
        tryGet: () => expect.fail("the plugin declares its deps"),
      },
      deps: { sandbox: SANDBOX_OFF },
      events: {
        on: (type: string, h: (payload: never) => void) => {
          handlers.set(type, h);
          return noop;
        },
      },
      onDispose: (d: { dispose(): void } | (() => void)) =>
        disposers.push(typeof d === "function" ? d : () => d.dispose()),
    } as unknown as PluginContext;
    shellPlugin.register(ctx);
    return { ctx, tools, handlers };
  }

  it("declares process and contributes bash, bash_output (read-only) and bash_kill", () => {
    const { tools } = register();
    expect(shellPlugin.manifest.id).to.equal("tools-shell");
    expect(shellPlugin.manifest.capabilities).to.deep.equal(["process"]);
    expect(tools.map((t) => [t.name, t.readOnly ?? false])).to.deep.equal([
      ["bash", false],
      ["bash_output", true],
      ["bash_kill", false],
    ]);
  });

  it("kills every background task when the plugin stops, and a session's tasks when it is deleted", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentd-shell-plugin-")));
    try {
      const { ctx, tools, handlers } = register({ killGraceMs: 100 });
      const [bash, output] = tools;
      const startIn = async (sessionId: string) => {
        const r = await bash.execute({ command: "sleep 30", run_in_background: true }, toolCtx(dir, { sessionId }));
        return { id: String(r.meta?.taskId), pid: Number(r.meta?.pid) };
      };
      const doomed = await startIn("deleted-session");
      const survivor = await startIn("other-session");
      handlers.get("session.deleted")?.({ sessionId: "deleted-session" } as never);
      const gone = await output.execute({ task_id: doomed.id }, toolCtx(dir, { sessionId: "deleted-session" }));
      expect(errorOf(gone).code).to.equal("not_found");
      expect(alive(survivor.pid)).to.equal(true);
      await shellPlugin.stop?.(ctx);
      expect(alive(doomed.pid)).to.equal(false);
      expect(alive(survivor.pid)).to.equal(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
