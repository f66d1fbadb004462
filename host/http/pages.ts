import type { Express, Request, Response } from "express";
import { loadExpress, onFirstUse } from "../lazy.js";
import type { Authenticator } from "./auth.js";

const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title><style>:root{color-scheme:light dark;--bg:#f5f6f8;--card:#fff;--fg:#1d2330;--muted:#626b7a;--border:#d9dde4;--accent:#2458d6;--accent-fg:#fff;--danger:#c0362c;--code:#eceef2}
@media (prefers-color-scheme:dark){:root{--bg:#15181e;--card:#1b1f27;--fg:#e3e7ee;--muted:#97a0b0;--border:#2f3642;--accent:#6d9bff;--accent-fg:#0d1320;--danger:#ff7b70;--code:#242a34}}
*{box-sizing:border-box}body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;padding:1rem}
main{width:100%;max-width:26rem;background:var(--card);border:1px solid var(--border);border-radius:12px;padding:1.5rem 1.75rem;box-shadow:0 8px 30px rgb(0 0 0 / .08)}
h1{font-size:1.3rem;margin:0 0 .25rem;letter-spacing:.02em}p{margin:.5rem 0;color:var(--muted)}label{display:flex;flex-direction:column;gap:.3rem;margin-top:1rem;font-weight:600}
input{width:100%;padding:.55rem .65rem;font:inherit;border:1px solid var(--border);border-radius:8px;background:var(--bg);color:var(--fg)}input:focus{outline:2px solid var(--accent);outline-offset:1px}
button{margin-top:1rem;width:100%;padding:.6rem 1rem;font:inherit;font-weight:600;border:0;border-radius:8px;background:var(--accent);color:var(--accent-fg);cursor:pointer}
.err{color:var(--danger);background:color-mix(in srgb,var(--danger) 12%,transparent);border-radius:8px;padding:.5rem .75rem}code{background:var(--code);padding:.05rem .3rem;border-radius:4px;font-size:.9em}a{color:var(--accent)}</style></head><body><main>${body}</main></body></html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginPage(error?: string): string {
  return page(
    "agentd: sign in",
    `<h1>agentd</h1><p>Sign in to the web UI. The quickest way: run <code>agentd open</code> in a terminal, which opens a one-time sign-in link. Or paste the access token here (<code>agentd token</code> prints it).</p>
${error ? `<p class="err">${escapeHtml(error)}</p>` : ""}<form method="post" action="/login">
<label>Access token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<button type="submit">Sign in</button></form>`,
  );
}

function html(res: Response, status: number, body: string): void {
  res
    .status(status)
    .set({
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": PAGE_CSP,
    })
    .send(body);
}

function isSecure(req: Request): boolean {
  return req.secure || req.headers["x-forwarded-proto"] === "https";
}

/** The browser login flow (outside /api/v1): a token form that sets an HttpOnly SameSite=Strict cookie. */
export function mountLoginPages(app: Express, auth: Authenticator): void {
  const express = loadExpress();
  const form = onFirstUse(() => express.urlencoded({ extended: false, limit: "8kb" }));
  const json = onFirstUse(() => express.json({ limit: "8kb" }));

  app.get("/login", (req, res) => {
    const code = typeof req.query.code === "string" ? req.query.code : undefined;
    if (code !== undefined) {
      // The redirect takes the code out of the address bar (and history); Referrer-Policy keeps it from leaking.
      if (!auth.redeemLoginCode(code)) {
        return html(
          res,
          401,
          loginPage("This sign-in link has expired or was already used. Run `agentd open` for a new one."),
        );
      }
      res.set("Set-Cookie", auth.issueCookie(isSecure(req)));
      return res.redirect(303, "/");
    }
    if (auth.authenticate(req)) return res.redirect(302, "/");
    html(res, 200, loginPage());
  });

  app.post("/login", form, json, (req, res) => {
    const wantsJson = Boolean(req.is("application/json"));
    const addr = req.socket.remoteAddress ?? "?";
    const wait = auth.retryAfter(addr);
    if (wait > 0) {
      res.set("Retry-After", String(wait));
      if (wantsJson)
        return res
          .status(429)
          .json({ error: "Too many sign-in attempts. Try again later.", code: "too_many_requests" });
      return html(res, 429, loginPage("Too many sign-in attempts. Try again later."));
    }
    const token = typeof req.body?.token === "string" ? req.body.token.trim() : "";
    if (!token || !auth.checkToken(token)) {
      auth.recordFailure(addr);
      if (wantsJson) return res.status(401).json({ error: "Invalid token", code: "unauthorized" });
      return html(res, 401, loginPage("Invalid token."));
    }
    res.set("Set-Cookie", auth.issueCookie(isSecure(req)));
    if (wantsJson) return res.status(200).json({ ok: true });
    res.redirect(303, "/");
  });

  app.post("/logout", (req, res) => {
    res.set("Set-Cookie", auth.clearCookie());
    if (req.is("application/json")) return res.status(200).json({ ok: true });
    res.redirect(303, "/login");
  });

  app.get("/", (req, res, next) => {
    if (!auth.authenticate(req)) return res.redirect(302, "/login");
    next();
  });
}

/** What `/` shows when no plugin (the web UI) serves it. Mounted after the plugin routes. */
export function mountFallbackHome(app: Express, version: string): void {
  app.get("/", (_req, res) => {
    html(
      res,
      200,
      page(
        "agentd",
        `<h1>agentd ${escapeHtml(version)}</h1><p>The daemon is running. The API is at <code>/api/v1</code>; its description at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p>
<form method="post" action="/logout"><button type="submit">Sign out</button></form>`,
      ),
    );
  });
}
