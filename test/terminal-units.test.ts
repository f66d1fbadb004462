import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import stringWidth from "string-width";
import { toolError, toolLine } from "../clients/terminal/format.js";
import { InputHistory } from "../clients/terminal/history.js";
import { splitFinished } from "../clients/terminal/markdown.js";
import * as ed from "../clients/terminal/ui/editor.js";
import { describeResources, SessionView } from "../clients/terminal/ui/store.js";
import width, { CLIENT_GLYPHS } from "../clients/terminal/ui/string-width.js";

describe("terminal client: pure parts", () => {
  it("lists project plugins in the trust prompt with their state", () => {
    expect(
      describeResources({
        rules: ["style"],
        skills: [],
        plugins: [
          { name: "echo", hash: "ab", state: "changed" },
          { name: "lint", hash: "cd", state: "new" },
        ],
      }),
    ).to.deep.equal(["rules: style", "plugins: echo (changed), lint (new)"]);
  });

  it("tool lines say what a call does", () => {
    expect(toolLine("bash", JSON.stringify({ command: "npm test\n  --silent" }))).to.equal("[bash] npm test --silent");
    expect(toolLine("edit", { filePath: "src/a.ts", oldString: "a\nb", newString: "a\nb\nc" })).to.equal(
      "[edit] src/a.ts +3 -2",
    );
    expect(toolLine("read", '{"path":"README.md"}')).to.equal("[read] README.md");
    expect(toolLine("grep", { pattern: "TODO", path: "src" })).to.equal("[grep] TODO in src");
    expect(toolLine("mcp_x_y", "not json")).to.equal("[mcp_x_y]");
    expect(toolError({ content: "Error (not_found): gone\nmore", error: { code: "not_found" } })).to.equal(
      "Error (not_found): gone",
    );
    expect(toolError({ content: "gone", error: { code: "not_found" } })).to.equal("not_found: gone");
  });

  it("streaming Markdown is cut after finished blocks, never inside a code fence", () => {
    expect(splitFinished("one\n\ntwo")).to.deep.equal(["one", "two"]);
    expect(splitFinished("no break yet")).to.deep.equal(["", "no break yet"]);
    const fenced = "```js\nconst a = 1;\n\nconst b = 2;\n";
    expect(splitFinished(fenced)).to.deep.equal(["", fenced]);
    expect(splitFinished(`${fenced}\`\`\`\n\nafter`)).to.deep.equal([`${fenced}\`\`\``, "after"]);
  });

  it("the composer edits several lines and completes @paths", () => {
    let e = ed.insert(ed.empty, "hello");
    e = ed.insert(e, "\nworld");
    expect(ed.onFirstLine(e)).to.equal(false);
    e = ed.vertical(e, -1);
    expect(e.cursor).to.equal(5);
    e = ed.home(e);
    expect(e.cursor).to.equal(0);
    e = ed.end(ed.vertical(e, 1));
    expect(e.cursor).to.equal(11);
    expect(ed.deleteWord(e).text).to.equal("hello\n");
    expect(ed.deleteToLineStart(e).text).to.equal("hello\n");
    const at = ed.insert(ed.empty, "look at @src/ma");
    const tok = ed.atToken(at);
    expect(tok).to.deep.equal({ start: 8, query: "src/ma" });
    expect(ed.replaceAt(at, 8, "src/main.ts").text).to.equal("look at @src/main.ts ");
    expect(ed.atToken(ed.insert(ed.empty, "mail me@home"))).to.equal(undefined);
  });

  it("long pastes become chips, expanded when sent", () => {
    const big = Array.from({ length: 10 }, (_, i) => `line ${i}`).join("\n");
    expect(ed.isLongPaste(big)).to.equal(true);
    expect(ed.isLongPaste("short")).to.equal(false);
    const label = ed.chipLabel(1, big);
    expect(label).to.equal("[Pasted text #1 +10 lines]");
    expect(ed.expandChips(`see ${label} please`, new Map([[label, big]]))).to.equal(`see ${big} please`);
  });

  it("input history persists per home, bounded, without repeats", () => {
    const home = mkdtempSync(join(tmpdir(), "agentd-hist-"));
    try {
      const h = new InputHistory(home);
      h.add("first");
      h.add("first");
      h.add("second\nline");
      expect(new InputHistory(home).list).to.deep.equal(["first", "second\nline"]);
      expect(readFileSync(join(home, "terminal-history.jsonl"), "utf8").split("\n").filter(Boolean)).to.have.length(2);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("the session view turns events into printed items, a live part and decisions", () => {
    const v = new SessionView();
    v.apply({
      type: "status",
      status: "idle",
      mode: "build",
      lastSeq: 3,
      projectTrust: { required: true, path: "/p", resources: { rules: ["r"] } },
    });
    expect(v.trustRequired?.path).to.equal("/p");
    v.apply({ type: "session_update", session: { id: "s" } });
    v.load({ id: "s", cwd: "/p", persona: "default", model: "m", mode: "build", status: "idle", messages: [] });
    v.apply({ type: "status", status: "running", startedAt: 1 });
    v.apply({ type: "user_message", message: { content: "hi" } });
    v.apply({ type: "thinking", text: "hmm" });
    v.apply({ type: "token", text: "Para one.\n\nPara" });
    expect(v.liveText).to.equal("Para");
    v.apply({ type: "token", text: " two." });
    v.apply({ type: "tool_start", id: "t1", name: "bash", args: '{"command":"ls"}' });
    expect(v.liveText).to.equal("");
    v.apply({ type: "tool_output", toolCallId: "t1", text: "a\nb\n" });
    expect(v.tools.get("t1")?.output).to.equal("a\nb\n");
    v.apply({ type: "tool_end", id: "t1", name: "bash", status: "ok", result: { content: "a\nb" } });
    // A denied call is reported once, on its own line, in the user's words (not the model-facing error).
    v.apply({ type: "tool_start", id: "t2", name: "bash", args: '{"command":"rm -rf x"}' });
    v.apply({ type: "bash_confirm", id: "c1", command: "rm -rf x", reason: "delete" });
    expect(v.confirmations).to.have.length(1);
    v.apply({ type: "bash_confirm_resolved", id: "c1", allowed: false, by: "user" });
    const error = { code: "permission_denied", retryable: false };
    v.apply({ type: "tool_end", id: "t2", name: "bash", status: "error", result: { content: "denied", error } });
    // A confirmation with no running call it belongs to still gets its line.
    v.apply({ type: "bash_confirm", id: "c2", command: "rm -rf y", reason: "delete" });
    v.apply({ type: "bash_confirm_resolved", id: "c2", allowed: false, by: "timeout" });
    v.apply({ type: "decision_state", question: { id: "q", questions: [{ question: "Q?", options: [] }] } });
    expect(v.question?.id).to.equal("q");
    v.apply({ type: "decision_state" });
    expect(v.question).to.equal(undefined);
    v.apply({ type: "end", reason: "aborted" });
    const printed = v.items.map((i) =>
      i.kind === "note" ? `note:${i.text}` : `${i.kind}:${"text" in i ? i.text : i.line}`,
    );
    expect(printed.slice(1)).to.deep.equal([
      "user:hi",
      "thinking:hmm",
      "assistant:Para one.",
      "assistant:Para two.",
      "tool:[bash] ls",
      "tool:[bash] rm -rf x",
      "note:denied (timed out): rm -rf y",
      "note:turn aborted",
    ]);
    expect(v.items.filter((i) => i.kind === "tool").map((i) => "detail" in i && i.detail)).to.deep.equal([
      undefined,
      "denied by you",
    ]);
  });

  it("the session view prints a queued follow-up once, and a frame replayed after a reconnect not again", () => {
    const v = new SessionView();
    v.load({ id: "s", cwd: "/p", persona: "default", model: "m", mode: "build", status: "idle", messages: [] });
    const frames = [
      { type: "status", seq: 2, status: "running" },
      { type: "user_message", seq: 3, message: { role: "user", content: "go", seq: 1 } },
      { type: "token", seq: 4, text: "Done." },
      { type: "steering_injected", seq: 5, messages: [{ role: "user", content: "quick", seq: 2 }] },
      { type: "followup_injected", seq: 6, messages: [{ role: "user", content: "then docs", seq: 3 }] },
      { type: "user_message", seq: 7, message: { role: "user", content: "then docs", seq: 3 } },
      { type: "end", seq: 8, reason: "stop" },
    ];
    for (const f of frames) v.apply(f);
    for (const f of frames.slice(1)) v.apply(f);
    expect(v.running).to.equal(true);
    expect(v.startedAt).to.be.a("number");
    expect(v.items.slice(1).map((i) => `${i.kind}:${"text" in i ? i.text : i.line}`)).to.deep.equal([
      "user:go",
      "note:the agent read: quick",
      "assistant:Done.",
      "user:then docs",
    ]);
  });
});

describe("terminal client: string widths of its own glyphs without string-width's slow path", () => {
  const sgr = (code: number, s: string) => `\x1b[${code}m${s}\x1b[0m`;
  it("measures ASCII, colour codes and the client's glyphs as string-width does", () => {
    const samples = [
      "",
      "ask anything; / for commands",
      ...[...CLIENT_GLYPHS],
      CLIENT_GLYPHS,
      `build · plan · fake-model · ⎇ main`,
      `${sgr(36, "› ")}\x1b[7m \x1b[27m${sgr(2, " ask anything")}`,
      `${sgr(33, "Ctrl-C again to quit · ")}ctx 0 · 0 tok`,
      "─".repeat(80),
    ];
    for (const s of samples) expect(width(s), JSON.stringify(s)).to.equal(stringWidth(s));
  });

  it("leaves every other string to string-width", () => {
    const samples = [
      "古い",
      "👍 done",
      "⚠️ emoji presentation",
      "e\u0301 combining",
      "👩‍💻 joiner",
      "\x1b[2K cursor control",
      "tab\there",
      "\u00a0nbsp",
    ];
    for (const s of samples) expect(width(s), JSON.stringify(s)).to.equal(stringWidth(s));
    for (const s of ["· …", sgr(31, "─")]) {
      expect(width(s, { ambiguousIsNarrow: false })).to.equal(stringWidth(s, { ambiguousIsNarrow: false }));
      expect(width(s, { countAnsiEscapeCodes: true })).to.equal(stringWidth(s, { countAnsiEscapeCodes: true }));
    }
    expect(width("· …", { ambiguousIsNarrow: false })).to.equal(5);
  });
});
