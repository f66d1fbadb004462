import { createHash } from "node:crypto";
import type { DisplayMessage, DisplayToolCall, StoredMessage } from "../../core/index.js";

export interface SharePageInput {
  title: string;
  persona: string;
  model: string;
  createdAt: string;
  updatedAt: string;
  messages: DisplayMessage[];
  /** The stored rows of the page, to inline images (the image route needs auth, this page has none). */
  rows: StoredMessage[];
  hasMoreHistory: boolean;
  toolResults: boolean;
  /** Applied to every text shown: hides local absolute paths. */
  redact: (s: string) => string;
  /** Renders the agent's Markdown to safe HTML (see `shareMarkdown`); without it, text is shown as written. */
  markdown?: (text: string) => string;
  /** A preview for the owner (in the web UI's share dialog): framable by the app, says it is not published yet. */
  preview?: boolean;
}

const MAX_TOOL_TEXT = 8000;
const MAX_IMAGE_BYTES_TOTAL = 12 * 1024 * 1024;
const IMAGE_DATA_URL = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/;

const CSS = `:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--surface:#f6f8fa;--border:#d1d9e0;--user:#0550ae;--tool:#6639ba;--err:#cf222e;--warn:#9a6700}
@media (prefers-color-scheme:dark){:root{--bg:#0f1117;--fg:#e6e9ef;--muted:#9aa3b2;--surface:#161a23;--border:#2e3545;--user:#8ab4ff;--tool:#c3a6ff;--err:#f87171;--warn:#fbbf24}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif}
header,main,footer{max-width:52rem;margin:0 auto;padding:0 1rem}header{padding-top:2rem}h1{font-size:1.4rem;margin:0 0 .25rem}
.meta,footer,.note{color:var(--muted);font-size:.85rem}footer{padding:2rem 1rem}
.msg{border:1px solid var(--border);border-radius:8px;padding:.75rem 1rem;margin:1rem 0;background:var(--surface)}
.role{font-size:.75rem;font-weight:600;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin-bottom:.35rem}
.user .role{color:var(--user)}.warning{border-style:dashed}.warning .role{color:var(--warn)}
.text{white-space:pre-wrap;overflow-wrap:anywhere}pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.35rem 0;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
details{margin:.5rem 0}summary{cursor:pointer;color:var(--muted)}.tool summary{color:var(--tool)}.tool.error summary{color:var(--err)}
img{max-width:100%;border-radius:6px;margin:.35rem 0;display:block}
.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}.md p,.md ul,.md ol{margin:.4rem 0}.md h1,.md h2,.md h3,.md h4{margin:.8rem 0 .3rem;line-height:1.3}.md h1{font-size:1.25rem}.md h2{font-size:1.12rem}.md h3{font-size:1rem}
.md code{background:var(--bg);border:1px solid var(--border);border-radius:4px;padding:0 .25rem;font:13px ui-monospace,SFMono-Regular,Menlo,monospace}.md pre{background:var(--bg);border:1px solid var(--border);border-radius:6px;padding:.5rem .7rem;overflow-x:auto;white-space:pre}.md pre code{border:0;padding:0;background:none}
.md table{border-collapse:collapse;margin:.5rem 0;display:block;overflow-x:auto}.md th,.md td{border:1px solid var(--border);padding:.25rem .5rem;text-align:left}.md blockquote{margin:.4rem 0;padding-left:.8rem;border-left:3px solid var(--border);color:var(--muted)}.md a{color:var(--user)}
.user .text{white-space:pre-wrap}.tool summary code{color:var(--muted);font:12px ui-monospace,SFMono-Regular,Menlo,monospace}.banner{background:var(--surface);border:1px dashed var(--warn);border-radius:8px;padding:.5rem .8rem;color:var(--warn)}`;

/** Turns the times (shown in UTC) into the reader's local time; the only script, allowed by its hash. */
const LOCAL_TIMES = `for(const t of document.querySelectorAll("time[datetime]")){const d=new Date(t.getAttribute("datetime"));if(!isNaN(d))t.textContent=d.toLocaleString(undefined,{dateStyle:"medium",timeStyle:"short"})}`;

const sha256 = (s: string) => createHash("sha256").update(s).digest("base64");

/**
 * The CSP allows exactly this stylesheet and the local-time script (by hash), data: images and nothing else: no other
 * script can run. The owner's preview may be framed by the app itself.
 */
export const SHARE_CSP = `default-src 'none'; style-src 'sha256-${sha256(CSS)}'; script-src 'sha256-${sha256(LOCAL_TIMES)}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
export const SHARE_PREVIEW_CSP = SHARE_CSP.replace("frame-ancestors 'none'", "frame-ancestors 'self'");

/** A readable UTC time (what a reader sees without the local-time script). */
function timeHtml(iso: string): string {
  const d = new Date(iso);
  const shown = Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(shown)}</time>`;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function cap(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}\n… (${s.length - max} more characters not shown)`;
}

function prettyArgs(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

/** Resolves image URLs of the display messages back to the stored data URLs, within a total budget. */
function imageResolver(rows: StoredMessage[]): (url: string) => string | undefined {
  const bySeq = new Map(rows.map((r) => [r.seq, r]));
  let budget = MAX_IMAGE_BYTES_TOTAL;
  return (url) => {
    const m = /[?&]seq=(\d+)&idx=(\d+)/.exec(url);
    const row = m ? bySeq.get(Number(m[1])) : undefined;
    if (!row || !Array.isArray(row.content)) return undefined;
    const parts = row.content.filter((p) => p.type === "image_url");
    const part = parts[Number(m?.[2])];
    const data = part?.type === "image_url" ? part.image_url.url : undefined;
    if (!data || !IMAGE_DATA_URL.test(data) || data.length > budget) return undefined;
    budget -= data.length;
    return data;
  };
}

function renderImages(urls: string[] | undefined, resolve: (url: string) => string | undefined): string {
  return (urls ?? [])
    .map((u) => {
      const data = resolve(u);
      return data ? `<img alt="attached image" src="${escapeHtml(data)}">` : `<p class="note">[image not shown]</p>`;
    })
    .join("");
}

/** What a tool call is about, in one line: the command, the path, the pattern. */
function toolSubject(raw: string): string {
  try {
    const a = JSON.parse(raw) as Record<string, unknown>;
    const v = a.command ?? a.filePath ?? a.path ?? a.pattern ?? a.query ?? a.url;
    const s = typeof v === "string" ? v.replace(/\s+/g, " ") : "";
    return s.length > 80 ? `${s.slice(0, 79)}…` : s;
  } catch {
    return "";
  }
}

/** A tool call as a collapsed card: name and subject; arguments and (when shared) the result inside. */
function renderTool(tc: DisplayToolCall, input: SharePageInput, resolve: (url: string) => string | undefined): string {
  const r = input.redact;
  const cls = tc.status === "error" ? "tool error" : "tool";
  const result = input.toolResults
    ? `<pre>${escapeHtml(r(cap(tc.result, MAX_TOOL_TEXT)))}</pre>${renderImages(tc.images, resolve)}`
    : `<p class="note">[result not shared]</p>`;
  const subject = toolSubject(tc.args);
  const status = tc.status === "error" ? " · failed" : "";
  return `<details class="${cls}"><summary>${escapeHtml(tc.name)}${
    subject ? ` <code>${escapeHtml(r(subject))}</code>` : ""
  }${status}</summary><pre>${escapeHtml(r(cap(prettyArgs(tc.args), MAX_TOOL_TEXT)))}</pre>${result}</details>`;
}

function renderMessage(m: DisplayMessage, input: SharePageInput, resolve: (url: string) => string | undefined): string {
  const r = input.redact;
  const role = m.role === "user" ? "You" : m.role === "assistant" ? "Agent" : m.role;
  const parts: string[] = [`<div class="role">${escapeHtml(role)}</div>`];
  if (m.thinking) {
    parts.push(`<details><summary>reasoning</summary><div class="text">${escapeHtml(r(m.thinking))}</div></details>`);
  }
  if (m.content && m.role === "assistant" && input.markdown)
    parts.push(`<div class="md">${input.markdown(r(m.content))}</div>`);
  else if (m.content) parts.push(`<div class="text">${escapeHtml(r(m.content))}</div>`);
  parts.push(renderImages(m.images, resolve));
  for (const tc of m.toolCalls ?? []) parts.push(renderTool(tc, input, resolve));
  return `<section class="msg ${escapeHtml(m.role)}">${parts.join("")}</section>`;
}

/** A self-contained, script-free HTML page of a shared session. */
export function renderSharePage(input: SharePageInput): string {
  const resolve = imageResolver(input.rows);
  const visible = input.messages.filter((m) => m.role !== "system");
  const body = visible.map((m) => renderMessage(m, input, resolve)).join("\n");
  const e = escapeHtml;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex,nofollow"><meta name="referrer" content="no-referrer">
<title>${e(input.title)} · agentd</title><style>${CSS}</style></head>
<body><header>${input.preview ? `<p class="banner">Preview: this is what the link will show. Nothing is published until you share it.</p>` : ""}<h1>${e(input.title)}</h1>
<p class="meta">Shared session · persona ${e(input.persona)} · model ${e(input.model)} · started ${timeHtml(input.createdAt)} · updated ${timeHtml(input.updatedAt)}${input.toolResults ? "" : " · tool results not shared"}</p></header>
<main>${input.hasMoreHistory ? `<p class="note">Earlier messages are not shown.</p>` : ""}
${body || `<p class="note">No messages yet.</p>`}</main>
<footer>A read-only snapshot shared from agentd. Local paths are shortened.</footer>${
    // The preview is framed without scripts: its times stay in UTC.
    input.preview ? "" : `<script>${LOCAL_TIMES}</script>`
  }</body></html>`;
}
