import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import type { Plugin } from "../core/plugin.js";
import { SessionServiceToken } from "../core/session-service.js";
import { builtinSource } from "../host/plugin-sources.js";
import { builtinPlugins } from "../plugins/index.js";
import settingsPlugin, { detectDialect, publicBaseUrl, reasoningOptionsFor } from "../plugins/settings/index.js";
import sharePlugin from "../plugins/share/index.js";
import sshPlugin from "../plugins/ssh/index.js";
import themesPlugin, { BUILTIN_THEMES, THEME_COLOR_KEYS } from "../plugins/themes/index.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";

const MINE: Plugin[] = [settingsPlugin, themesPlugin];

/** The built-ins with this file's plugins, plus `extra`; ssh and share only when given (features absent otherwise). */
function builtins(extra: Plugin[] = []) {
  const mine = [...MINE, ...extra];
  const ids = new Set([...mine.map((p) => p.manifest.id), "ssh", "share"]);
  return [...builtinPlugins.filter((p) => !ids.has(p.manifest.id)), ...mine].map(builtinSource);
}

/** WCAG relative luminance contrast ratio of two #rrggbb colours. */
function contrast(a: string, b: string): number {
  const lum = (hex: string) => {
    const [r, g, bl] = [1, 3, 5].map((i) => {
      const v = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

const SECRET_KEY = "sk-test-SECRET-key-1234567890";

describe("settings and themes: pure logic", () => {
  it("keeps text readable: main text 4.5:1, every colour 3:1, high-contrast themes 7:1", () => {
    const fg = ["user", "agent", "tool", "persona", "accent", "success", "warning", "error", "muted"];
    for (const t of BUILTIN_THEMES) {
      const c = t.colors as unknown as Record<string, string>;
      expect(contrast(c.agent as string, c.bg as string), `${t.id} agent`).to.be.at.least(4.5);
      const floor = t.id.startsWith("high-contrast") ? 7 : 3;
      for (const k of fg) {
        for (const bg of ["bg", "bgSurface", "bgRaised"]) {
          expect(contrast(c[k] as string, c[bg] as string), `${t.id} ${k} on ${bg}`).to.be.at.least(floor);
        }
      }
    }
  });

  it("strips credentials, query and fragment from base URLs", () => {
    expect(publicBaseUrl("http://u:p@127.0.0.1:8080/v1/?k=1#x")).to.equal("http://127.0.0.1:8080/v1");
    expect(publicBaseUrl(undefined)).to.equal(null);
    expect(publicBaseUrl("not a url")).to.equal(null);
  });

  it("maps model families and dialects", () => {
    const values = (model: string, dialect = detectDialect(undefined)) =>
      reasoningOptionsFor(model, dialect).options.map((o) => o.value);
    expect(values("o3-mini")).to.deep.equal(["low", "medium", "high"]);
    expect(values("o1")).to.deep.equal(["low", "medium", "high"]);
    expect(values("gpt-5")).to.deep.equal(["minimal", "low", "medium", "high"]);
    expect(values("openai/gpt-5-nano", "openrouter")).to.deep.equal(["minimal", "low", "medium", "high"]);
    expect(values("gpt-5-chat-latest")).to.deep.equal([]);
    expect(values("gpt-4o")).to.deep.equal([]);
    expect(values("llama-3.1-70b")).to.deep.equal([]);
    expect(values("Qwen/Qwen3-32B", "generic")).to.deep.equal(["off", "on"]);
    expect(values("qwen3-235b-a22b-instruct-2507", "qwen")).to.deep.equal([]);
    expect(values("deepseek-reasoner", "deepseek")).to.deep.equal([]);
    expect(values("glm-4.6", "zai")).to.deep.equal(["off", "on"]);
    expect(values("anthropic/claude-sonnet-4", "openrouter")).to.deep.equal(["off", "low", "medium", "high"]);
    expect(reasoningOptionsFor("gpt-4o", "openai").kind).to.equal("none");
    expect(reasoningOptionsFor("gpt-4o", "openai").default).to.equal(null);

    expect(detectDialect(undefined)).to.equal("openai");
    expect(detectDialect("https://api.openai.com/v1")).to.equal("openai");
    expect(detectDialect("https://openrouter.ai/api/v1")).to.equal("openrouter");
    expect(detectDialect("https://dashscope-intl.aliyuncs.com/compatible-mode/v1")).to.equal("qwen");
    expect(detectDialect("https://api.moonshot.ai/v1")).to.equal("kimi");
    expect(detectDialect("https://api.x.ai/v1")).to.equal("xai");
    expect(detectDialect("https://open.bigmodel.cn/api/paas/v4")).to.equal("zai");
    expect(detectDialect("http://127.0.0.1:8000/v1")).to.equal("generic");
    expect(detectDialect("garbage")).to.equal("generic");
  });
});

describe("settings and themes plugins", () => {
  let d: TestDaemon;
  const env = {
    OPENAI_API_KEY: SECRET_KEY,
    OPENAI_BASE_URL: "https://alice:pa55word@api.deepseek.com/v1/?apikey=QUERYSECRET#frag",
    AGENTD_MODEL: "deepseek-chat",
  };
  beforeEach(async () => {
    d = await startTestDaemon({ builtins: builtins(), env });
  });
  afterEach(async () => d.cleanup());

  describe("GET /themes", () => {
    it("lists at least six complete themes with unique ids", async () => {
      const res = await d.get("/themes");
      expect(res.status).to.equal(200);
      const ids = res.body.map((t: { id: string }) => t.id);
      expect(ids).to.include.members(["dark", "light", "solarized-dark", "solarized-light", "high-contrast"]);
      expect(ids.length).to.be.at.least(6);
      expect(new Set(ids).size).to.equal(ids.length);
      for (const t of res.body) {
        expect(t.label, t.id).to.be.a("string").that.is.not.empty;
        expect(t.description, t.id).to.be.a("string").that.is.not.empty;
        expect(Object.keys(t.colors), t.id).to.have.members([...THEME_COLOR_KEYS]);
        for (const [k, v] of Object.entries(t.colors)) {
          const values = typeof v === "string" ? [v] : Object.values(v as Record<string, string>);
          for (const c of values) expect(c, `${t.id}.${k}`).to.match(/^#[0-9a-f]{6}$/);
        }
      }
    });
  });

  describe("GET /config", () => {
    it("gives defaults, version and features, and never the key, the password in the URL or the token", async () => {
      const res = await d.get("/config");
      expect(res.status).to.equal(200);
      expect(res.body).to.include({
        model: "deepseek-chat",
        persona: "default",
        baseURL: "https://api.deepseek.com/v1",
        hasApiKey: true,
        providerConfigured: true,
        reasoningDialect: "deepseek",
        theme: "dark",
        apiVersion: "1.0.0",
        showReasoning: true,
      });
      expect(res.body.version).to.match(/^\d+\.\d+\.\d+/);
      expect(res.body.cwd).to.be.a("string");
      expect(res.body.features).to.include({ share: false, ssh: false });
      for (const secret of [SECRET_KEY, "pa55word", "alice", "QUERYSECRET", d.info.token]) {
        expect(res.text).to.not.include(secret);
      }
      expect(JSON.stringify(res.body)).to.not.match(/"(apiKey|token|password)"/i);
    });

    it("needs authentication", async () => {
      const res = await d.get("/config", { auth: false });
      expect(res.status).to.equal(401);
      expect(res.body.error).to.be.a("string");
    });
  });

  describe("appearance", () => {
    it("defaults to showing reasoning, persists a change across a restart", async () => {
      expect((await d.get("/settings/appearance")).body).to.deep.equal({ showReasoning: true });
      const set = await d.post("/settings/appearance", { showReasoning: false });
      expect(set.status).to.equal(200);
      expect(set.body).to.deep.equal({ ok: true, showReasoning: false });
      expect((await d.get("/settings/appearance")).body).to.deep.equal({ showReasoning: false });
      const file = join(d.home, "plugins-data", "settings", "appearance.json");
      expect(JSON.parse(readFileSync(file, "utf8"))).to.deep.equal({ showReasoning: false });

      await d.stop();
      const d2 = await startTestDaemon({ home: d.home, builtins: builtins(), env });
      try {
        expect((await d2.get("/settings/appearance")).body).to.deep.equal({ showReasoning: false });
        expect((await d2.get("/config")).body.showReasoning).to.equal(false);
      } finally {
        await d2.stop();
      }
    });

    it("answers 400 with a readable error for bad bodies and extra properties, and changes nothing", async () => {
      const bad: Array<[unknown, RegExp]> = [
        [{}, /showReasoning/],
        [{ showReasoning: "yes" }, /boolean/],
        [{ showReasoning: 1 }, /boolean/],
        [{ showReasoning: true, theme: "dark" }, /theme/],
        [[true], /object/],
        [null, /.+/],
      ];
      for (const [body, msg] of bad) {
        const res = await d.post("/settings/appearance", body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error, JSON.stringify(body)).to.match(msg);
      }
      const raw = await d.request("POST", "/settings/appearance", undefined, { raw: "{showReasoning: false" });
      expect(raw.status).to.equal(400);
      expect(raw.body.error).to.be.a("string");
      const empty = await d.request("POST", "/settings/appearance", undefined, { raw: "" });
      expect(empty.status).to.equal(400);
      expect((await d.get("/settings/appearance")).body).to.deep.equal({ showReasoning: true });
      expect(existsSync(join(d.home, "plugins-data", "settings", "appearance.json"))).to.equal(false);
    });
  });

  describe("reasoning options", () => {
    it("gives the default model's options on the configured dialect (DeepSeek: thinking on/off)", async () => {
      const res = await d.get("/settings/reasoning-options");
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ model: "deepseek-chat", dialect: "deepseek", kind: "toggle", default: "off" });
      expect(res.body.options).to.deep.equal([
        { value: "off", label: "Off" },
        { value: "on", label: "On" },
      ]);
    });

    it("uses the session's model and shows its current choice; 404 for an unknown session", async () => {
      const id = await d.createSession({ model: "gpt-5-mini" });
      const res = await d.get(`/sessions/${id}/reasoning-options`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ model: "gpt-5-mini", kind: "effort", default: "medium" });
      expect(res.body.options.map((o: { value: string }) => o.value)).to.deep.equal([
        "minimal",
        "low",
        "medium",
        "high",
      ]);
      expect(res.body).to.not.have.property("current");

      const svc = d.daemon.services.get(SessionServiceToken);
      await svc.update(id, { meta: { ...(await svc.require(id)).meta, reasoningEffort: "high" } });
      expect((await d.get(`/sessions/${id}/reasoning-options`)).body.current).to.equal("high");

      const missing = await d.get("/sessions/nosuchsession/reasoning-options");
      expect(missing.status).to.equal(404);
      expect(missing.body.error).to.match(/not found/i);
    });
  });
});

describe("settings plugin options", () => {
  it("honours pluginOptions.settings (theme, reasoningFormat) and reports share/ssh features when present", async () => {
    const d = await startTestDaemon({
      builtins: builtins([sshPlugin, sharePlugin]),
      env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", AGENTD_MODEL: "qwen3-32b" },
      config: { pluginOptions: { settings: { theme: "nord", reasoningFormat: "qwen" } } },
    });
    try {
      const cfg = await d.get("/config");
      expect(cfg.body).to.include({
        theme: "nord",
        reasoningDialect: "qwen",
        hasApiKey: false,
        baseURL: "http://127.0.0.1:9/v1",
      });
      expect(cfg.body.features).to.include({ ssh: true, share: true });
      const r = await d.get("/settings/reasoning-options");
      expect(r.body).to.include({ dialect: "qwen", kind: "toggle", default: "on" });
    } finally {
      await d.cleanup();
    }
  });

  it("refuses invalid plugin options (the plugin is reported failed, the daemon still runs)", async () => {
    const d = await startTestDaemon({
      builtins: builtins(),
      config: { pluginOptions: { settings: { reasoningFormat: "klingon" } } },
    });
    try {
      const status = await d.get("/server/status");
      const p = status.body.plugins.find((x: { id: string }) => x.id === "settings");
      expect(p.state).to.equal("failed");
      expect(p.error).to.match(/reasoningFormat/);
      expect((await d.get("/config")).status).to.equal(404);
    } finally {
      await d.cleanup();
    }
  });
});
