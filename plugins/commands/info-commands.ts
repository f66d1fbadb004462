import {
  ApiError,
  type CommandInvocation,
  type Persona,
  type ProjectResourceList,
  type ProjectView,
  type SlashCommand,
} from "../../core/index.js";
import {
  assertIdle,
  type CommandEnv,
  cwdOf,
  envNote,
  providerOf,
  type Reply,
  requireSession,
  requireSettings,
  setMeta,
  usage,
  words,
} from "./env.js";
import { listWorktrees, repoInfo } from "./git.js";

const WORKTREE_USAGE = "/worktree [list | new [branch] | merge | discard]";
export const REASONING_LEVELS = ["off", "minimal", "low", "medium", "high", "on"];
const MODEL_ID = /^[^\s]{1,200}$/;

function projectView(env: CommandEnv, cwd: string): ProjectView | undefined {
  try {
    return env.project()?.view(cwd);
  } catch {
    return undefined;
  }
}

/** The visible entries of one kind: the trusted project's first, then the global ones. */
function scoped<K extends keyof ProjectResourceList>(
  view: ProjectView | undefined,
  kind: K,
): Array<{ scope: string; item: ProjectResourceList[K][number] }> {
  if (!view) return [];
  const local = view.trusted ? view.local[kind] : [];
  return [
    ...local.map((item) => ({ scope: "project", item })),
    ...view.global[kind].map((item) => ({ scope: "global", item })),
  ];
}

function visiblePersonas(env: CommandEnv, cwd: string | undefined): Persona[] {
  return env.project()?.personas(cwd) ?? env.personas.list();
}

const MAX_LISTED_MODELS = 60;

/** `/model` without an argument: the current model and the ones the provider lists (the current one marked). */
function modelListing(current: string | null, ids: string[], error: string | undefined): string {
  const head = `Model: ${current ?? "(none)"}`;
  if (!ids.length)
    return `${head}\n${error ? `The provider's models could not be listed: ${error}` : "The provider lists no models."}`;
  const shown = ids.slice(0, MAX_LISTED_MODELS).map((m) => `${m === current ? "● " : "  "}${m}`);
  const more = ids.length > shown.length ? [`  … and ${ids.length - shown.length} more`] : [];
  return [head, `Available (${ids.length}), switch with /model <id>:`, ...shown, ...more].join("\n");
}

/** Commands that show or change settings and list what the daemon has loaded. */
export function infoCommands(env: CommandEnv): SlashCommand[] {
  return [
    {
      name: "model",
      description: "Show the models, or switch the model: this session's, or without a session the default",
      takesArgs: true,
      blocking: true,
      global: true,
      run: async (inv): Promise<Reply> => {
        const rec = inv.sessionId ? await requireSession(env, inv) : undefined;
        const current = rec?.model ?? env.settings()?.provider.model ?? null;
        const id = inv.args;
        if (!id) {
          const { ids, error } = await env.models.refresh();
          return {
            message: modelListing(current, ids, error),
            model: current,
            models: ids,
            ...(error ? { error } : {}),
          };
        }
        if (!MODEL_ID.test(id)) throw usage("/model <model id>");
        // A model the provider does not list is refused (a typo would only fail at the next message); when the
        // provider cannot list its models, any id is taken.
        let known = env.models.known();
        if (!known.includes(id)) known = (await env.models.refresh()).ids;
        if (known.length && !known.includes(id)) {
          const close = known.filter((m) => m.toLowerCase().includes(id.toLowerCase())).slice(0, 8);
          throw ApiError.badRequest(
            `Unknown model "${id}": the provider does not list it. ${
              close.length ? `Did you mean: ${close.join(", ")}?` : "Send /model to see the models it lists."
            }`,
          );
        }
        const note = known.length ? "" : " (the provider's model list is not available to check it)";
        if (!rec) {
          // The default model of new sessions (settings.json).
          await requireSettings(env).update({ provider: { model: id } });
          return {
            message: `Default model set to ${id}${note}${envNote(env, "provider.model")}`,
            model: env.settings()?.provider.model ?? id,
            saved: id,
          };
        }
        await env.sessions().update(rec.id, { model: id });
        return { message: `Model set to ${id}${note}`, model: id };
      },
    },
    {
      name: "persona",
      description: "Show the personas, or switch the persona: this session's, or without a session the default",
      takesArgs: true,
      blocking: true,
      global: true,
      run: async (inv): Promise<Reply> => {
        if (!inv.sessionId) {
          const all = visiblePersonas(env, undefined);
          const list = all.map((p) => ({ name: p.name, label: p.label, description: p.description, source: p.source }));
          const current = env.settings()?.defaultPersona ?? "default";
          if (!inv.args) return { message: `Default persona: ${current}`, persona: current, personas: list };
          const p = all.find((x) => x.name === inv.args);
          if (!p) {
            throw ApiError.badRequest(
              `Unknown persona "${inv.args}" (known: ${all.map((x) => x.name).join(", ") || "none"})`,
            );
          }
          await requireSettings(env).update({ defaultPersona: p.name });
          return { message: `Default persona set to ${p.label}`, persona: p.name, personas: list };
        }
        const rec = await requireSession(env, inv);
        const all = visiblePersonas(env, rec.cwd);
        const list = all.map((p) => ({ name: p.name, label: p.label, description: p.description, source: p.source }));
        if (!inv.args) return { message: `Persona: ${rec.persona}`, persona: rec.persona, personas: list };
        const p = all.find((x) => x.name === inv.args);
        if (!p)
          throw ApiError.badRequest(
            `Unknown persona "${inv.args}" (known: ${all.map((x) => x.name).join(", ") || "none"})`,
          );
        await env.sessions().update(rec.id, { persona: p.name });
        return { message: `Persona set to ${p.label}`, persona: p.name, personas: list };
      },
    },
    {
      name: "provider",
      description: "Show the model providers, or pick this session's provider: /provider [id]",
      takesArgs: true,
      blocking: true,
      global: true,
      run: async (inv): Promise<Reply> => {
        const rec = inv.sessionId ? await requireSession(env, inv) : undefined;
        const providers = env.providers.list().map((p) => ({ id: p.id, description: p.description }));
        const current = providerOf(env, rec)?.id ?? null;
        if (!inv.args) return { message: `Provider: ${current ?? "(none configured)"}`, provider: current, providers };
        if (!rec) throw ApiError.badRequest("The provider is picked per session; send /provider <id> in a session");
        if (!env.providers.has(inv.args)) {
          throw ApiError.badRequest(
            `Unknown provider "${inv.args}" (known: ${providers.map((p) => p.id).join(", ") || "none"})`,
          );
        }
        await setMeta(env, rec.id, { provider: inv.args });
        return { message: `Provider set to ${inv.args}`, provider: inv.args, providers };
      },
    },
    {
      name: "reasoning",
      description: `Show or set the reasoning level (${REASONING_LEVELS.join(", ")}, or reset): this session's, or without a session the default`,
      takesArgs: true,
      blocking: true,
      global: true,
      run: async (inv): Promise<Reply> => {
        const arg = inv.args.toLowerCase();
        if (!inv.sessionId) {
          // The level of new sessions (settings.json).
          if (arg === "reset" || arg === "default") await requireSettings(env).update({ reasoning: null });
          else if (arg) {
            if (!REASONING_LEVELS.includes(arg)) throw usage(`/reasoning [${REASONING_LEVELS.join("|")}|reset]`);
            await requireSettings(env).update({ reasoning: arg });
          }
          const level = env.settings()?.reasoning ?? null;
          return {
            message: `Reasoning of new sessions: ${level ?? "model default"}`,
            reasoning: level,
            options: REASONING_LEVELS,
          };
        }
        const rec = await requireSession(env, inv);
        if (!arg) {
          const level = rec.meta.reasoningEffort ?? null;
          return { message: `Reasoning: ${level ?? "model default"}`, reasoning: level, options: REASONING_LEVELS };
        }
        if (arg === "reset" || arg === "default") {
          await setMeta(env, rec.id, { reasoningEffort: undefined });
          return { message: "Reasoning: model default", reasoning: null, options: REASONING_LEVELS };
        }
        if (!REASONING_LEVELS.includes(arg)) throw usage(`/reasoning [${REASONING_LEVELS.join("|")}|reset]`);
        await setMeta(env, rec.id, { reasoningEffort: arg });
        return { message: `Reasoning: ${arg}`, reasoning: arg, options: REASONING_LEVELS };
      },
    },
    {
      name: "theme",
      description:
        "Show the colour themes, or pick one: /theme [id] (/theme system: follow each client's light or dark)",
      takesArgs: true,
      global: true,
      run: async (inv): Promise<Reply> => {
        const themes = env.themes.list();
        const list = themes.map((t) => ({ id: t.id, label: t.label }));
        const stored = env.settings()?.theme ?? env.prefs.get("theme");
        const current =
          typeof stored === "string" && env.themes.has(stored)
            ? stored
            : env.themes.has("dark")
              ? "dark"
              : (themes[0]?.id ?? null);
        if (!inv.args) return { message: `Theme: ${current ?? "(no themes installed)"}`, theme: current, themes: list };
        if (inv.args === "system" && !env.themes.has("system")) {
          await requireSettings(env).update({ theme: null });
          return { message: "Theme: each client follows its system's light or dark setting", theme: null };
        }
        const t = env.themes.get(inv.args);
        if (!t)
          throw ApiError.badRequest(
            `Unknown theme "${inv.args}" (known: ${list.map((x) => x.id).join(", ") || "none"})`,
          );
        await requireSettings(env).update({ theme: t.id });
        return { message: `Theme set to ${t.label}`, theme: t.id, label: t.label, colors: t.colors };
      },
    },
    {
      name: "skills",
      description: "List the skills visible to this session",
      global: true,
      run: async (inv): Promise<Reply> => {
        const pc = env.project();
        if (!pc || typeof pc.skills !== "function")
          return { message: "Skills are not available (the project plugin is not loaded)", skills: [] };
        const skills = pc
          .skills(await cwdOf(env, inv))
          .map((s) => ({ name: s.name, description: s.description, source: s.source }));
        return { message: skills.length ? `${skills.length} skill(s)` : "No skills found", skills };
      },
    },
    {
      name: "rules",
      description: "List the rules added to the system prompt",
      global: true,
      run: async (inv): Promise<Reply> => {
        const view = projectView(env, await cwdOf(env, inv));
        if (!view) return { message: "Rules are not available (the project plugin is not loaded)", rules: [] };
        const rules = scoped(view, "rules").map(({ scope, item }) => {
          const r = item as { name?: unknown; description?: unknown };
          return {
            name: String(r.name ?? ""),
            description: typeof r.description === "string" ? r.description : "",
            scope,
          };
        });
        return { message: rules.length ? `${rules.length} rule(s)` : "No rules", rules };
      },
    },
    {
      name: "hooks",
      description: "List the tool hooks that run around tool calls",
      global: true,
      run: async (inv): Promise<Reply> => {
        const view = projectView(env, await cwdOf(env, inv));
        if (!view) return { message: "Hooks are not available (the project plugin is not loaded)", hooks: [] };
        const hooks = scoped(view, "hooks").map(({ scope, item }) => {
          const h = item as { event?: unknown; matcher?: unknown; command?: unknown };
          return {
            event: String(h.event ?? ""),
            matcher: typeof h.matcher === "string" ? h.matcher : "",
            command: Array.isArray(h.command) ? h.command.map(String) : [],
            scope,
          };
        });
        return { message: hooks.length ? `${hooks.length} hook(s)` : "No hooks", hooks };
      },
    },
    {
      name: "mcp",
      description: "List the MCP servers, or reconnect one: /mcp [list|reconnect <name>]",
      takesArgs: true,
      global: true,
      run: async (inv): Promise<Reply> => {
        const mcp = env.mcp();
        if (!mcp) return { message: "MCP is not available (the mcp plugin is not loaded)", servers: [] };
        const [sub, name] = words(inv.args);
        if (sub === "reconnect") {
          if (!name) throw usage("/mcp reconnect <server>");
          const server = mcp.list().find((s) => s.name === name);
          if (!server || !mcp.reconnect(name, server.project))
            throw ApiError.badRequest(`Unknown MCP server "${name}"`);
          return { message: `Reconnecting ${name}`, servers: mcp.list() };
        }
        if (sub && sub !== "list") throw usage("/mcp [list|reconnect <name>]");
        const servers = mcp.list();
        return { message: servers.length ? `${servers.length} MCP server(s)` : "No MCP servers configured", servers };
      },
    },
    {
      name: "web",
      description: "Show whether web search and fetch are available",
      global: true,
      run: (): Reply => {
        const webSearch = env.tools.has("web_search");
        const webFetch = env.tools.has("web_fetch");
        return {
          message:
            webSearch || webFetch
              ? `Web tools: ${[webSearch && "web_search", webFetch && "web_fetch"].filter(Boolean).join(", ")}`
              : "Web tools are not loaded",
          webSearch,
          webFetch,
        };
      },
    },
    {
      name: "ssh",
      description: "Show the SSH hosts the agent can use",
      global: true,
      run: async (inv): Promise<Reply> => {
        const hosts = scoped(projectView(env, await cwdOf(env, inv)), "ssh").map(({ scope, item }) => ({
          name: String(item),
          scope,
        }));
        const enabled = env.tools.has("ssh");
        return {
          message: enabled ? `SSH: ${hosts.length} project host(s)` : "The ssh tool is not loaded",
          enabled,
          hosts,
        };
      },
    },
    {
      name: "repo",
      description: "Show the git state of the working directory",
      run: async (inv): Promise<Reply> => {
        const info = await repoInfo((await requireSession(env, inv)).cwd);
        const message = info.isGit
          ? `${info.branch}${info.dirty ? " (uncommitted changes)" : ""}`
          : "Not a git repository";
        return { message, ...info };
      },
    },
    {
      name: "worktree",
      description: "List the repository's worktrees, or move the session into a new one, merge it or discard it",
      takesArgs: true,
      run: async (inv): Promise<Reply> => {
        const rec = await requireSession(env, inv);
        const [sub = "list", ...rest] = words(inv.args);
        const service = env.worktrees();
        if (sub === "list") {
          const worktrees = await listWorktrees(rec.cwd);
          const own = service?.info(rec.id);
          return {
            message: worktrees.length ? `${worktrees.length} worktree(s)` : "Not a git repository",
            worktrees,
            ...(own ? { session: own } : {}),
          };
        }
        if (!service) throw ApiError.badRequest("Worktrees are not available in this daemon");
        if (sub === "new") {
          if (rest.length > 1) throw usage("/worktree new [branch]");
          const wt = await service.moveToNew(rec.id, rest[0] ? { branch: rest[0] } : {});
          return { message: `Working in ${wt.path} on ${wt.branch}`, worktree: wt };
        }
        if (rest.length) throw usage(WORKTREE_USAGE);
        assertIdle(env, rec.id);
        if (sub === "merge") {
          const out = await service.merge(rec.id);
          const wt = service.info(rec.id);
          const how = out.fastForward ? "fast-forward" : "merge commit";
          return {
            message: out.merged ? `Merged into ${wt?.base} (${how}, ${out.files.length} file(s))` : "Nothing to merge",
            ...out,
          };
        }
        if (sub === "discard") {
          const out = await service.discard(rec.id);
          return { message: `Worktree removed; back in ${out.cwd}`, ...out };
        }
        throw usage(WORKTREE_USAGE);
      },
    },
    {
      name: "reload",
      description: "Re-scan skills, rules, personas, context files and MCP servers (the conversation stays)",
      blocking: true,
      global: true,
      run: async (inv): Promise<Reply> => {
        const cwd = await cwdOf(env, inv);
        const pc = env.project() as { reload?: () => unknown } | undefined;
        await pc?.reload?.();
        env.bus.emit({ type: "resources.reload", cwd, ...(inv.sessionId ? { sessionId: inv.sessionId } : {}) });
        if (inv.sessionId) env.sessions().publish(inv.sessionId, { type: "resources_reloaded", cwd });
        return {
          message: pc?.reload
            ? "Reloaded skills, rules, personas, context files and MCP servers"
            : "Reload requested (no project plugin is loaded)",
        };
      },
    },
    {
      name: "help",
      description: "List the slash commands",
      global: true,
      run: (inv: CommandInvocation): Reply => {
        const cmds = env.commands
          .list()
          .filter((c) => inv.sessionId || c.global)
          .sort((a, b) => a.name.localeCompare(b.name));
        const message = cmds.map((c) => `/${c.name}: ${c.description}`).join("\n");
        return { message, commands: cmds.map((c) => `/${c.name}`) };
      },
    },
  ];
}
