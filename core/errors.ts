/**
 * The one error type that carries an HTTP-meaningful status. Core code throws it; the host turns it into
 * `{ error: message }` with the status. Anything else thrown is a bug and becomes a 500 without details.
 */
/** Marks ApiErrors across copies of this module (a bundled daemon and a plugin importing `agentd` each have one). */
const API_ERROR = Symbol.for("agentd.ApiError");

export class ApiError extends Error {
  readonly [API_ERROR] = true;

  constructor(
    readonly status: number,
    message: string,
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ApiError";
  }

  static badRequest(message: string, extra?: Record<string, unknown>) {
    return new ApiError(400, message, extra);
  }
  static notFound(message: string) {
    return new ApiError(404, message);
  }
  static conflict(message: string, extra?: Record<string, unknown>) {
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
