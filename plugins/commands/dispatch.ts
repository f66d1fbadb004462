import { ApiError, type CommandResult, errorMessage, isApiError, type SlashCommand } from "../../core/index.js";
import { assertIdle, type CommandEnv, requireTurns } from "./env.js";

export interface CommandResponse {
  ok: true;
  /** The command as resolved (`/stop` answers as `/abort`); the first word for text sent to the agent. */
  command: string;
  /** The readable outcome; `{sessionId, message}` for a command that names a session (/fork), as cast answers. */
  result: string | { sessionId: string; message: string };
  /** The readable outcome, always text (what a client shows). */
  message: string;
  /** Structured data of the command (lists for pickers, ids, new values). */
  data?: Record<string, unknown>;
}

/** `/name args`: the name (lowercased) and the trimmed rest. 400 when the input is not a command. */
export function parseCommandLine(line: string): { name: string; args: string } {
  const text = line.trim();
  if (!text.startsWith("/")) throw ApiError.badRequest("Not a command: a slash command starts with /");
  const m = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text);
  if (!m) throw ApiError.badRequest("Not a command: give a command name after /");
  return { name: (m[1] as string).toLowerCase(), args: (m[2] ?? "").trim() };
}

/** A command by name or alias. */
export function findCommand(env: CommandEnv, name: string): SlashCommand | undefined {
  return env.commands.get(name) ?? env.commands.list().find((c) => c.aliases?.includes(name));
}

async function projectRootOf(env: CommandEnv, sessionId: string | undefined): Promise<string | undefined> {
  const rec = sessionId ? await env.sessions().find(sessionId) : undefined;
  return rec ? env.trust()?.projectRoot(rec.cwd) : undefined;
}

/**
 * The wire shape: the readable text in `result` (a string outcome, or an object's `message` field), the rest of
 * an object in `data` (any other value is `data.value`).
 */
export function toResponse(name: string, out: CommandResult): CommandResponse {
  let text = `/${name} done`;
  let data: Record<string, unknown> | undefined;
  if (typeof out === "string") text = out;
  else if (out && typeof out === "object" && !Array.isArray(out)) {
    const { message, ...rest } = out as Record<string, unknown>;
    if (typeof message === "string") text = message;
    else if (message !== undefined) rest.message = message;
    if (Object.keys(rest).length) data = rest;
  } else if (out !== undefined && out !== null) data = { value: out };
  // A command that names a session (/fork) answers `result` as cast's daemon does, `{sessionId}`, with the text.
  const sessionId = data?.sessionId;
  const result = typeof sessionId === "string" ? { sessionId, message: text } : text;
  const res: CommandResponse = { ok: true, command: `/${name}`, result, message: text };
  if (data) res.data = data;
  return res;
}

/**
 * Runs one command line in a session (or, without one, as a global command). Unknown commands in a session are
 * sent to the agent as ordinary text; blocking commands are refused with 409 while a turn runs.
 */
export async function executeCommand(
  env: CommandEnv,
  line: string,
  sessionId: string | undefined,
): Promise<CommandResponse> {
  const { name, args } = parseCommandLine(line);
  if (sessionId) await env.sessions().require(sessionId);
  const found = findCommand(env, name);
  // A project plugin's command runs only in sessions of its project; elsewhere it is not a command.
  const cmd = found?.projectRoot && (await projectRootOf(env, sessionId)) !== found.projectRoot ? undefined : found;
  if (!cmd) {
    if (!sessionId) throw ApiError.badRequest(`Unknown command: /${name}`);
    const rec = await env.sessions().require(sessionId);
    const status = await requireTurns(env).chat(rec, { text: line.trim() });
    return toResponse(name, {
      message: `/${name} is not a command; sent to the agent as a message`,
      sentAsText: true,
      status,
    });
  }
  if (!sessionId && !cmd.global) throw ApiError.badRequest(`Command requires an active session: /${cmd.name}`);
  if (sessionId && cmd.blocking) assertIdle(env, sessionId);
  try {
    return toResponse(cmd.name, await cmd.run({ sessionId, args }));
  } catch (err) {
    if (isApiError(err)) throw err;
    env.log.error({ err, command: cmd.name }, "slash command failed");
    throw ApiError.badRequest(`/${cmd.name} failed: ${errorMessage(err)}`);
  }
}
