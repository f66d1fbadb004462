import { createRequire } from "node:module";
import type { Static, TSchema } from "@sinclair/typebox";
import type { Ajv, ValidateFunction } from "ajv";
import type { ToolContext, ToolDefinition, ToolErrorCode, ToolResult } from "./contributions.js";
import { errorMessage } from "./errors.js";

/**
 * The one tool-failure format (built-in, MCP and third-party tools alike): `content` is the readable message,
 * `error` says what kind of failure it is, whether retrying may help and what to do instead. The model reads all
 * three (see `resultForModel`).
 */
export function toolError(
  code: ToolErrorCode,
  message: string,
  suggestedFix: string,
  retryable = false,
  meta?: Record<string, unknown>,
): ToolResult {
  return { content: message, isError: true, error: { code, retryable, suggestedFix }, ...(meta ? { meta } : {}) };
}

/** Thrown inside a tool made with `defineTool` (at any depth); becomes `toolError(...)` at the tool's edge. */
export class ToolFailure extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    readonly suggestedFix: string,
    readonly retryable = false,
    readonly meta?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ToolFailure";
  }

  toResult(meta = this.meta): ToolResult {
    return toolError(this.code, this.message, this.suggestedFix, this.retryable, meta);
  }
}

/** The result of a call the user stopped. */
export function abortedResult(): ToolResult {
  return toolError(
    "aborted",
    "[ABORTED] Tool execution was cancelled.",
    "The user stopped the turn; wait for new instructions.",
  );
}

// Created at the first tool call, not at import: constructing Ajv costs the daemon's cold start ~10-20 ms.
let ajv: Ajv | undefined;
function toolAjv(): Ajv {
  if (!ajv) {
    const { Ajv: AjvClass } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
    ajv = new AjvClass({ strict: false, allErrors: false, coerceTypes: false, useDefaults: true });
  }
  return ajv;
}
const validators = new WeakMap<object, ValidateFunction | null>();

/** The compiled validator of a parameters schema (cached); undefined when the schema does not compile. */
function validatorFor(schema: TSchema): ValidateFunction | undefined {
  let v = validators.get(schema);
  if (v === undefined) {
    try {
      v = toolAjv().compile(schema);
    } catch {
      v = null; // a tool with an uncompilable schema gets its arguments unchecked
    }
    validators.set(schema, v);
  }
  return v ?? undefined;
}

/** Checks a call's arguments against a tool's schema (applying defaults); a failure result, or undefined. */
export function checkToolArguments(tool: { name: string; parameters: TSchema }, args: unknown): ToolResult | undefined {
  const validate = validatorFor(tool.parameters);
  if (!validate || validate(args)) return undefined;
  const detail = (validate.errors ?? [])
    .map((e) => `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}`)
    .join("; ");
  return toolError(
    "invalid_arguments",
    `Invalid arguments for ${tool.name}: ${detail}`,
    "Fix the arguments to match the tool's parameter schema.",
    true,
  );
}

export interface ToolSpec<S extends TSchema> {
  name: string;
  description: string;
  /** JSON Schema (TypeBox) of the arguments: sent to the model, checked before `execute`, and its type. */
  parameters: S;
  readOnly?: boolean;
  modes?: Array<"build" | "plan">;
  /** Gets arguments that match `parameters` (defaults applied). May throw: see `defineTool`. */
  execute(args: Static<S>, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * A tool whose `execute` gets typed, validated arguments and may throw: a `ToolFailure` becomes its result,
 * anything thrown after an abort becomes `aborted`, and any other exception a readable `execution_failed`. The
 * arguments are checked here too, so a tool called directly (by a test or another plugin) is as safe as one the
 * agent loop calls.
 */
export function defineTool<S extends TSchema>(spec: ToolSpec<S>): ToolDefinition<Static<S>> {
  const { execute, ...rest } = spec;
  return {
    ...rest,
    async execute(args, ctx) {
      if (ctx.signal.aborted) return abortedResult();
      const input = args ?? {};
      const invalid = checkToolArguments(spec, input);
      if (invalid) return invalid;
      try {
        return await execute(input as Static<S>, ctx);
      } catch (err) {
        if (ctx.signal.aborted) return abortedResult();
        if (err instanceof ToolFailure) return err.toResult();
        return toolError(
          "execution_failed",
          `${spec.name} failed: ${errorMessage(err)}`,
          "Check the arguments; if it keeps failing, try another approach.",
        );
      }
    },
  };
}
