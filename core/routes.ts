import { Kind, type Static, type TSchema } from "@sinclair/typebox";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Who made the request, as established by the host's auth layer. */
export interface Principal {
  readonly kind: "bearer" | "cookie" | "anonymous";
}

/** A server-sent-events connection handed to a route; the host owns framing, heartbeats and bounds. */
export interface SseStream {
  /** The `Last-Event-ID` header (or `?lastEventId=`) the client reconnected with. */
  readonly lastEventId: string | undefined;
  readonly closed: boolean;
  /**
   * Queues one frame. Returns false when the client is over its bounded queue; the frame is not queued and the
   * caller must catch the client up some other way (replay from the log, or a resync event).
   */
  send(data: string, id?: string | number): boolean;
  /** Calls `fn` once the client's queue has drained below its bound again. */
  onDrain(fn: () => void): void;
  onClose(fn: () => void): void;
  close(): void;
}

export interface RouteRequest<P = unknown, Q = unknown, B = unknown> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The mount point of the stable API, `/api/v1`, for building URLs in responses. */
  readonly apiBase: string;
  readonly principal: Principal;
  /** Aborted when the client disconnects. */
  readonly signal: AbortSignal;
}

export type RouteResult =
  | { status?: number; body: unknown; headers?: Record<string, string> }
  | {
      status?: number;
      /** The body: bytes, bytes in parts (sent one after the other, without being joined), or a stream. */
      bytes: Uint8Array | readonly Uint8Array[] | NodeJS.ReadableStream;
      contentType: string;
      headers?: Record<string, string>;
    }
  | { html: string; status?: number; headers?: Record<string, string> }
  | { sse: (stream: SseStream) => void | Promise<void> };

export interface ResponseSpec {
  description?: string;
  /** JSON Schema of the body. Omit for an empty body. */
  schema?: TSchema;
  /** Defaults to application/json. */
  contentType?: string;
}

type StaticOr<S, D> = S extends TSchema ? Static<S> : D;

/**
 * Never set: the request names the route's responses so that TypeScript settles them (from `responses`) before it
 * types the handler, whose replies are then checked against them with their literal values kept.
 */
export interface RepliesOf<R> {
  readonly __responses?: R;
}

/** The success responses of a route, by status. */
export type RouteResponses = Record<number, TSchema | ResponseSpec>;

/**
 * The JSON body a response's schema describes (anything for a `ResponseSpec`). An indexed access, not a conditional
 * type: TypeScript keeps a reply's literal values (`ok: true`, `status: 202`) only against a resolved shape.
 */
type BodyOf<X> = (X & { params: []; static: unknown })["static"];

/**
 * What a handler may answer, typed from its `responses`: a JSON body of a declared shape (the status is checked
 * against the declared ones when responses are validated), or raw bytes, a page or a stream.
 */
export type RouteReply<R> =
  | { status?: number; body: BodyOf<R[keyof R & number]>; headers?: Record<string, string> }
  | Exclude<RouteResult, { body: unknown }>;

export interface RouteDefinition<
  P extends TSchema | undefined = TSchema | undefined,
  Q extends TSchema | undefined = TSchema | undefined,
  B extends TSchema | undefined = TSchema | undefined,
  R extends RouteResponses = RouteResponses,
> {
  method: HttpMethod;
  /**
   * Express-style path (`/sessions/:id`). Built-in plugins give it relative to `/api/v1`; a third-party plugin's
   * path is mounted under `/api/v1/plugins/<plugin id>` by the host whatever it declares.
   */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  /** `public` needs the plugin capability `routes.public`; every other route requires auth. */
  auth?: "required" | "public";
  /**
   * Also accept the access token as `?token=` (loopback peers only): for event streams, since EventSource cannot
   * send headers. Honoured for the host's own routes only.
   */
  queryToken?: boolean;
  /**
   * A browser page rather than an API resource (e.g. the public share page): mounted at the site root instead of
   * under `/api/v1`, and left out of the OpenAPI document. Built-in plugins only.
   */
  page?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** When false, an absent body is accepted (the handler sees `undefined`). Default true when `body` is set. */
  bodyRequired?: boolean;
  /** Per-route JSON body cap in bytes; the host default applies otherwise. */
  bodyLimit?: number;
  /** Success responses by status; the host adds the error responses (400/401/404/413/500) itself. */
  responses: R;
  /** Extra error statuses this route produces (e.g. 409), documented with the Error shape. */
  errors?: number[];
  handler(
    req: RouteRequest<StaticOr<P, Record<string, never>>, StaticOr<Q, Record<string, never>>, StaticOr<B, undefined>> &
      RepliesOf<R>,
  ): RouteReply<R> | Promise<RouteReply<R>>;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry stores routes of every shape
export type AnyRoute = RouteDefinition<any, any, any, any>;

/** Identity function that gives a route declaration full static types from its schemas. */
export function defineRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  R extends RouteResponses = RouteResponses,
>(route: RouteDefinition<P, Q, B, R>): RouteDefinition<P, Q, B, R> {
  return route;
}

export function isResponseSpec(x: TSchema | ResponseSpec): x is ResponseSpec {
  return !(Kind in x);
}
