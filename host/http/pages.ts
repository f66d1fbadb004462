import type { Express, Request, Response } from "express";
import { loadExpress } from "../lazy.js";
import type { Authenticator } from "./auth.js";

const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title><style>body{font:15px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}
input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}button{margin-top:.75rem;padding:.5rem 1rem;font:inherit}
.err{color:#b00020}code{background:#f3f3f3;padding:0 .25rem}</style></head><body>${body}</body></html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginPage(error?: string): string {
  return page(
    "agentd: sign in",
    `<h1>agentd</h1><p>Paste the access token (<code>agentd token</code> prints it; it is also in <code>server.json</code> in the daemon home).</p>
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
  const form = express.urlencoded({ extended: false, limit: "8kb" });
  const json = express.json({ limit: "8kb" });

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
