import type { ToolContext, ToolDefinition, ToolErrorCode, ToolResult, TSchema } from "../../core/index.js";

/** A failed call as the model sees it: what went wrong and what to do instead, in the content and in `error`. */
export function fail(code: ToolErrorCode, message: string, suggestedFix: string, retryable = false): ToolResult {
  return {
    isError: true,
    content: `Error (${code}): ${message}\nSuggested fix: ${suggestedFix}`,
    error: { code, retryable, suggestedFix },
  };
}

export function aborted(): ToolResult {
  return fail(
    "aborted",
    "the call was aborted before it finished.",
    "The turn was aborted; do not retry unless asked to.",
  );
}

/** Maps a filesystem errno to a stable code. `display` is the path as the model wrote it (never a secret). */
export function fsFailure(err: unknown, display: string): ToolResult {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return fail(
        "not_found",
        `${display} does not exist.`,
        "Check the path with ls or glob; paths are relative to the working directory.",
      );
    case "ENOTDIR":
      return fail("not_found", `a parent of ${display} is a file, not a directory.`, "Check the path with ls.");
    case "EISDIR":
      return fail(
        "invalid_arguments",
        `${display} is a directory.`,
        "Use ls to list a directory; read/write/edit take files.",
      );
    case "EACCES":
    case "EPERM":
      return fail(
        "permission_denied",
        `the operating system denied access to ${display}.`,
        "Pick a file you can access.",
      );
    case "ELOOP":
      return fail("invalid_arguments", `${display} is a symbolic link loop.`, "Use the link's real target path.");
    case "EESCAPE":
      return fail(
        "outside_workspace",
        `${display} changed while it was being opened and now resolves outside the working directory.`,
        "Use a path inside the working directory.",
      );
    case "EMFILE":
    case "ENFILE":
    case "EBUSY":
    case "EAGAIN":
      return fail("execution_failed", `${display} is temporarily unavailable (${code}).`, "Retry in a moment.", true);
    default:
      return fail(
        "execution_failed",
        `filesystem error on ${display}: ${err instanceof Error ? err.message : String(err)}`,
        "Check the path and try again.",
      );
  }
}

/** Thrown by the argument readers; turned into an `invalid_arguments` result by `defineTool`. */
export class ArgError extends Error {}

type Args = Record<string, unknown>;

export function stringArg(args: Args, key: string): string | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new ArgError(`"${key}" must be a string.`);
  return v;
}

export function requiredString(args: Args, key: string, allowEmpty = false): string {
  const v = stringArg(args, key);
  if (v === undefined || (!allowEmpty && v === "")) throw new ArgError(`"${key}" is required.`);
  return v;
}

export function intArg(args: Args, key: string, min: number, max: number): number | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v)) throw new ArgError(`"${key}" must be an integer.`);
  if (v < min || v > max) throw new ArgError(`"${key}" must be between ${min} and ${max} (got ${v}).`);
  return v;
}

/** A positive count; above `max` it is lowered to `max` (the output says what was left out), never refused. */
export function limitArg(args: Args, key: string, max: number, fallback: number): number {
  return Math.min(intArg(args, key, 1, Number.MAX_SAFE_INTEGER) ?? fallback, max);
}

export function boolArg(args: Args, key: string): boolean {
  const v = args[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") throw new ArgError(`"${key}" must be true or false.`);
  return v;
}

export function enumArg<E extends string>(args: Args, key: string, values: readonly E[]): E | undefined {
  const v = stringArg(args, key);
  if (v === undefined) return undefined;
  if (!(values as readonly string[]).includes(v)) throw new ArgError(`"${key}" must be one of ${values.join(", ")}.`);
  return v as E;
}

/**
 * Builds a tool whose `run` may throw: argument errors become `invalid_arguments`, anything after an abort
 * becomes `aborted`, and any other exception a readable `execution_failed`, so the loop never sees a throw.
 */
export function defineTool(def: {
  name: string;
  description: string;
  parameters: TSchema;
  readOnly?: boolean;
  run(args: Args, ctx: ToolContext): Promise<ToolResult>;
}): ToolDefinition {
  return {
    name: def.name,
    description: def.description,
    parameters: def.parameters,
    readOnly: def.readOnly,
    async execute(args, ctx) {
      if (ctx.signal.aborted) return aborted();
      try {
        const input = args && typeof args === "object" ? args : {};
        return await def.run(input, ctx);
      } catch (err) {
        if (ctx.signal.aborted) return aborted();
        if (err instanceof ArgError) {
          return fail("invalid_arguments", err.message, `Fix the arguments of ${def.name} and call it again.`);
        }
        return fail(
          "execution_failed",
          `${def.name} failed: ${err instanceof Error ? err.message : String(err)}`,
          "Check the arguments; if it keeps failing, try another approach.",
        );
      }
    },
  };
}
