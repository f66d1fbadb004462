/**
 * The one error type that carries an HTTP-meaningful status. Core code throws it; the host turns it into
 * `{ error: message, code }` with the status. Anything else thrown is a bug and becomes a 500 without details.
 */
/** Marks ApiErrors across copies of this module (a bundled daemon and a plugin importing `agentd` each have one). */
const API_ERROR = Symbol.for("agentd.ApiError");

/**
 * Every stable `code` an `/api/v1` error body can carry, with the status it comes with and what it means. The one
 * list: the OpenAPI document's `Error.code` enum and the README's table are this, and a test holds both to it.
 * Add a code here (never rename one: clients branch on them); a throw site names it, or gets its status's default.
 */
export const ERROR_CODES = {
  bad_request: [400, "The request is refused as it stands (the message says why)"],
  validation_failed: [400, "The body or query does not match the route's schema, or a required body is missing"],
  invalid_json: [400, "The request body is not valid JSON"],
  unauthorized: [401, "Authentication required: no or a wrong Bearer token, or no valid browser login session"],
  forbidden: [403, "Refused"],
  host_not_allowed: [403, "The Host header is not a loopback name or a configured host (DNS rebinding)"],
  cross_site: [403, "A cross-site request (its Origin or Sec-Fetch-Site)"],
  not_found: [404, "The target does not exist (or a path parameter cannot name anything)"],
  route_not_found: [404, "No route has this method and path"],
  session_not_found: [404, "No session has this id"],
  confirmation_not_found: [404, "No confirmation with this id in this session"],
  conflict: [409, "Conflicts with the current state"],
  turn_running: [409, "A turn is running in this session: abort it (or wait) first"],
  agent_running: [409, "A turn is running (worktree routes and blocking slash commands; the same as turn_running)"],
  confirmation_resolved: [409, "The confirmation was already answered, timed out or aborted"],
  no_pending_question: [409, "No question is awaiting an answer"],
  rule_from_config: [409, "The approval rule comes from config.json (permissions.rules): edit the file instead"],
  has_worktree: [409, "The session already works in a worktree"],
  no_worktree: [409, "The session has no worktree"],
  base_not_branch: [409, "The worktree's base is not a branch: nothing to merge into"],
  merge_conflict: [409, "The merge conflicts (`paths` lists the files)"],
  checkout_dirty: [409, "The base's checkout has uncommitted changes to the merged paths (`paths`)"],
  undo_needs_force: [409, "/undo would delete files created since the turn started (`createdFiles`)"],
  undo_failed: [409, "/undo could not restore the files"],
  checkpoint_pruned: [409, "The checkpoint needed to restore the files was pruned"],
  checkpoint_missing: [409, "No checkpoint of the files was taken for a turn to restore"],
  checkpoint_failed: [409, "Could not take a checkpoint of the files first"],
  restore_failed: [409, "Could not restore the files"],
  payload_too_large: [413, "The request body is larger than the route's limit"],
  unsupported_media_type: [415, "The body's Content-Encoding or charset is not supported"],
  too_many_requests: [429, "Too many attempts (browser sign-in): try again later"],
  internal_error: [500, "An internal error (details are in the daemon's log, never in the response)"],
  upstream_failed: [502, "The model provider answered with an error or could not be reached"],
  unavailable: [503, "A needed part is not available (not built, or a tool it runs failed)"],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes, in the order of ERROR_CODES. */
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

const STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "too_many_requests",
  500: "internal_error",
  502: "upstream_failed",
  503: "unavailable",
};

/** The code of an error that names none: its status's (any other 4xx is bad_request, 5xx internal_error). */
export function defaultErrorCode(status: number): ErrorCode {
  return STATUS_CODES[status] ?? (status >= 400 && status < 500 ? "bad_request" : "internal_error");
}

/** Fields written next to `error` in the body; `code` is the error's stable code. */
export type ApiErrorExtra = { code?: ErrorCode } & Record<string, unknown>;

export class ApiError extends Error {
  readonly [API_ERROR] = true;
  /** The stable code of the body: `extra.code`, or the status's default. */
  readonly code: ErrorCode;

  constructor(
    readonly status: number,
    message: string,
    readonly extra?: ApiErrorExtra,
  ) {
    super(message);
    this.name = "ApiError";
    this.code = extra?.code ?? defaultErrorCode(status);
  }

  static badRequest(message: string, extra?: ApiErrorExtra) {
    return new ApiError(400, message, extra);
  }
  static notFound(message: string, code?: ErrorCode) {
    return new ApiError(404, message, code ? { code } : undefined);
  }
  static conflict(message: string, extra?: ApiErrorExtra) {
    return new ApiError(409, message, extra);
  }
}

export function isApiError(err: unknown): err is ApiError {
  return (
    err instanceof ApiError || (err instanceof Error && (err as unknown as Record<symbol, unknown>)[API_ERROR] === true)
  );
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
