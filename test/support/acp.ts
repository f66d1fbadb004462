import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  type ClientCapabilities,
  type ClientConnection,
  client,
  methods,
  ndJsonStream,
  type ReadTextFileRequest,
  RequestError,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
  type WriteTextFileRequest,
} from "@agentclientprotocol/sdk";

const MAIN = fileURLToPath(new URL("../../host/main.js", import.meta.url));

export interface AcpHandlers {
  permission?: (
    req: RequestPermissionRequest,
    signal: AbortSignal,
  ) => RequestPermissionResponse | Promise<RequestPermissionResponse>;
  readTextFile?: (req: ReadTextFileRequest) => string | Promise<string>;
  writeTextFile?: (req: WriteTextFileRequest) => void | Promise<void>;
  elicitation?: (req: unknown) => unknown;
}

/**
 * `agentd acp` as a child process, driven by the SDK's client side: every session/update is recorded, and the
 * editor's side of permission, file and elicitation requests is what the test gives.
 */
export class AcpClientHarness {
  readonly updates: SessionNotification[] = [];
  readonly permissions: RequestPermissionRequest[] = [];
  /** Methods the agent called that this editor did not offer. */
  readonly unoffered: string[] = [];
  readonly permissionWaiters: Array<(req: RequestPermissionRequest) => void> = [];
  private waiters: Array<{ pred: (u: SessionNotification) => boolean; resolve: (u: SessionNotification) => void }> = [];
  stderr = "";

  private constructor(
    readonly child: ChildProcess,
    readonly conn: ClientConnection,
  ) {}

  static start(home: string, handlers: AcpHandlers = {}): AcpClientHarness {
    const child = spawn(process.execPath, [MAIN, "acp", "--home", home], { stdio: ["pipe", "pipe", "pipe"] });
    let harness: AcpClientHarness | undefined;
    let app = client()
      .onNotification(methods.client.session.update, ({ params }) => harness?.record(params))
      .onRequest(methods.client.session.requestPermission, async ({ params, signal }) => {
        harness?.permissions.push(params);
        for (const w of harness?.permissionWaiters.splice(0) ?? []) w(params);
        if (!handlers.permission) return { outcome: { outcome: "cancelled" } };
        return handlers.permission(params, signal);
      });
    // Requests the editor does not offer are recorded (and refused, as an editor would).
    app = app.onRequest("*", ({ method }) => {
      harness?.unoffered.push(method);
      throw RequestError.methodNotFound(method);
    });
    const read = handlers.readTextFile;
    if (read)
      app = app.onRequest(methods.client.fs.readTextFile, async ({ params }) => ({ content: await read(params) }));
    const write = handlers.writeTextFile;
    if (write) {
      app = app.onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
        await write(params);
        return {};
      });
    }
    const elicit = handlers.elicitation;
    if (elicit) app = app.onRequest(methods.client.elicitation.create, async ({ params }) => elicit(params) as never);
    const stream = ndJsonStream(
      Writable.toWeb(child.stdin as Writable) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>,
    );
    const conn = app.connect(stream);
    harness = new AcpClientHarness(child, conn);
    child.stderr?.on("data", (d: Buffer) => {
      if (harness) harness.stderr += d.toString();
    });
    return harness;
  }

  get agent() {
    return this.conn.agent;
  }

  async initialize(caps: ClientCapabilities = {}) {
    return this.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: caps });
  }

  async newSession(cwd: string): Promise<string> {
    const r = await this.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
    return r.sessionId;
  }

  prompt(sessionId: string, text: string) {
    return this.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  private record(n: SessionNotification): void {
    this.updates.push(n);
    this.waiters = this.waiters.filter((w) => {
      if (!w.pred(n)) return true;
      w.resolve(n);
      return false;
    });
  }

  /** The updates of one session, optionally of one kind. */
  of<K extends SessionUpdate["sessionUpdate"]>(
    sessionId: string,
    kind?: K,
  ): Array<SessionUpdate & { sessionUpdate: K }> {
    return this.updates
      .filter((u) => u.sessionId === sessionId && (!kind || u.update.sessionUpdate === kind))
      .map((u) => u.update as SessionUpdate & { sessionUpdate: K });
  }

  /** Text of the agent message chunks of a session. */
  text(
    sessionId: string,
    kind: "agent_message_chunk" | "user_message_chunk" | "agent_thought_chunk" = "agent_message_chunk",
  ) {
    return this.of(sessionId, kind)
      .map((u) => (u.content.type === "text" ? u.content.text : ""))
      .join("");
  }

  waitForUpdate(pred: (u: SessionNotification) => boolean, timeoutMs = 15_000): Promise<SessionNotification> {
    const found = this.updates.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching session/update; stderr: ${this.stderr}`)),
        timeoutMs,
      );
      this.waiters.push({
        pred,
        resolve: (u) => {
          clearTimeout(timer);
          resolve(u);
        },
      });
    });
  }

  /** The next permission request to arrive. */
  nextPermission(): Promise<RequestPermissionRequest> {
    return new Promise((resolve) => this.permissionWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    this.child.stdin?.end();
    await exited;
  }
}
