/**
 * `agentd run`: one turn, non-interactive, for scripts and CI. The answer streams to stdout, tool activity to
 * stderr (or, with --json, every event of the stream as one JSON line on stdout); the exit code says how the turn
 * ended (see EXIT). A dangerous command is denied unless --yes; a question is answered from --answer values, or
 * the turn is aborted with a clear message.
 */
import { randomUUID } from "node:crypto";
import { ok } from "../api/client.js";
import { type StreamEvent, subscribe } from "../api/events.js";
import { connect, openSession, promptAfterWorktree, type SessionChoice } from "./connect.js";
import { EXIT, formatQuestions, type QuestionSpec, type ToolResultLike, toolError, toolLine } from "./format.js";

export interface RunOptions extends SessionChoice {
  json?: boolean;
  yes?: boolean;
  /** Answers to questions, in order; one per question (a multi-select answer is comma-separated). */
  answer?: string[];
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return "";
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The prompt: the arguments, or standard input when none are given (or the prompt is `-`). */
export async function promptFrom(words: string[]): Promise<string> {
  const arg = words.join(" ").trim();
  if (arg && arg !== "-") return arg;
  return (await readStdin()).trim();
}

export async function runCommand(words: string[], opts: RunOptions): Promise<number> {
  const prompt = await promptFrom(promptAfterWorktree(words, opts));
  if (!prompt) {
    process.stderr.write(
      'agentd run: no prompt (give it as an argument, e.g. agentd run "fix the tests", or on stdin)\n',
    );
    return EXIT.usage;
  }
  const conn = await connect(opts.home);
  // Without a provider the turn cannot run: say so before a session is made for nothing.
  const cfg = await ok(conn.api.GET("/api/v1/config"));
  if (!cfg.providerConfigured) {
    process.stderr.write(
      "agentd run: no model provider is connected. Connect one in the web UI (`agentd open`, then Settings → " +
        "Provider), or set OPENAI_BASE_URL and OPENAI_API_KEY and restart the daemon.\n",
    );
    return EXIT.error;
  }
  const { id } = await openSession(conn, opts);
  return runTurn(conn, id, prompt, opts);
}

export async function runTurn(
  conn: Awaited<ReturnType<typeof connect>>,
  id: string,
  prompt: string,
  opts: RunOptions,
): Promise<number> {
  const out = process.stdout;
  const err = process.stderr;
  const answers = [...(opts.answer ?? [])];
  let denied = 0;
  let questionFailed = false;
  let lastOut = "\n";
  let interrupts = 0;
  let posted = false;
  let down = false;

  const write = (s: string) => {
    if (!s) return;
    out.write(s);
    lastOut = s;
  };
  const note = (s: string) => {
    if (!opts.json && !lastOut.endsWith("\n")) write("\n");
    err.write(`${s}\n`);
  };
  const abort = () => ok(conn.api.POST("/api/v1/sessions/{id}/abort", { params: { path: { id } } })).catch(() => {});

  let finish!: (code: number) => void;
  const done = new Promise<number>((r) => {
    finish = r;
  });
  let opened!: () => void;
  const ready = new Promise<void>((r) => {
    opened = r;
  });

  let ended = false;
  const onEvent = (ev: StreamEvent) => {
    // The turn's `end` is the last line: what the daemon says after it (idle, totals) is not this turn's output.
    if (ended) return;
    if (opts.json) out.write(`${JSON.stringify(ev)}\n`);
    if (!posted && ev.projectTrust && !opts.json) {
      const t = ev.projectTrust as { path?: string };
      err.write(
        `note: ${t.path} has project-local resources (rules, skills, MCP...) that load only once it is trusted; this turn runs without them (decide in \`agentd chat\`)\n`,
      );
    }
    opened();
    if (!posted) return;
    switch (ev.type) {
      case "token":
        if (!opts.json) write(String(ev.text ?? ""));
        break;
      case "tool_start":
        if (!opts.json) note(toolLine(String(ev.name), ev.args));
        break;
      case "tool_end":
        if (!opts.json && ev.status === "error") note(`  ✗ ${toolError(ev.result as ToolResultLike)}`);
        break;
      case "retry":
        if (!opts.json) note(`retrying the provider (attempt ${ev.attempt}): ${ev.reason ?? ""}`);
        break;
      case "error":
        if (!opts.json) note(`error: ${ev.message ?? ""}`);
        break;
      case "notice":
        if (!opts.json) note(`note: ${ev.message ?? ""}`);
        break;
      case "bash_confirm": {
        const allow = opts.yes === true;
        if (!allow) denied++;
        if (!opts.json)
          note(`${allow ? "allowed (--yes)" : "denied (no --yes)"}: ${ev.command} (${ev.reason ?? "dangerous"})`);
        void ok(
          conn.api.POST("/api/v1/sessions/{id}/bash-confirm", {
            params: { path: { id } },
            body: { id: String(ev.id), allow },
          }),
        ).catch((e: Error) => note(`could not answer the confirmation: ${e.message}`));
        break;
      }
      case "decision_state": {
        const q = ev.question as { questions: QuestionSpec[] } | undefined;
        if (q) answerQuestion(q.questions);
        if (ev.planTransition && !opts.json) {
          const p = ev.planTransition as { path?: string };
          note(`the plan is ready for approval: ${p.path ?? ""} (approve it in \`agentd chat\`)`);
        }
        break;
      }
      case "end": {
        ended = true;
        const reason = String(ev.reason);
        if (!opts.json && !lastOut.endsWith("\n")) write("\n");
        if (questionFailed) finish(EXIT.question);
        else if (reason === "stop") finish(denied > 0 ? EXIT.denied : EXIT.ok);
        else if (reason === "aborted") finish(EXIT.aborted);
        else if (reason === "disconnected") finish(EXIT.disconnected);
        else finish(EXIT.error);
        break;
      }
    }
  };

  const answerQuestion = (questions: QuestionSpec[]) => {
    if (answers.length < questions.length) {
      questionFailed = true;
      err.write(
        `agentd run: the agent asks a question and no answer was given (pass --answer VALUE once per question):\n${formatQuestions(questions)}\n`,
      );
      void abort();
      return;
    }
    const values = questions.map((q) => {
      const a = answers.shift() as string;
      return q.multiSelect ? a.split(",").map((s) => s.trim()) : a;
    });
    if (!opts.json) note(`answered: ${values.map((v) => (Array.isArray(v) ? v.join(", ") : v)).join("; ")}`);
    void ok(conn.api.POST("/api/v1/sessions/{id}/question", { params: { path: { id } }, body: { values } })).catch(
      (e: Error) => {
        questionFailed = true;
        err.write(`agentd run: the answer was refused: ${e.message}\n`);
        void abort();
      },
    );
  };

  const sub = subscribe(conn, id, onEvent, {
    onState: (s) => {
      if (s === "reconnecting" && !down) err.write("agentd: connection to the daemon lost, reconnecting…\n");
      else if (s === "open" && down) err.write("agentd: reconnected\n");
      down = s === "reconnecting";
    },
  });
  const onSigint = () => {
    if (++interrupts > 1) {
      sub.close();
      process.exit(EXIT.aborted);
    }
    note("aborting the turn (Ctrl-C again to quit at once)");
    void abort();
  };
  process.on("SIGINT", onSigint);
  try {
    await ready;
    posted = true;
    await ok(
      conn.api.POST("/api/v1/sessions/{id}/chat", {
        params: { path: { id } },
        body: { text: prompt, clientMessageId: randomUUID() },
      }),
    );
    return await done;
  } finally {
    process.off("SIGINT", onSigint);
    sub.close();
  }
}
