/**
 * The REST half of the typed client: requests, responses and error envelopes typed from the service's own OpenAPI
 * document (schema.ts), and the keyset-pagination iterators. It needs only openapi-fetch (the Socket.IO half,
 * realtime.ts, needs socket.io-client), so server-side code can import it alone.
 */
import createFetchClient, { type Client, type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths } from "./schema.js";

/** Every model of the API by name: `Schemas["ThresholdBody"]`. */
export type Schemas = components["schemas"];
/** The body of every failure: `{error: {code, message}}`. Branch on `code`; `message` is for people. */
export type ErrorEnvelope = Schemas["ErrorEnvelope"];

/** The API's paths (they all start with /api/v1). */
export type ApiPath = keyof paths;
/** The paths that answer GET. */
export type GetPath = { [P in ApiPath]: paths[P] extends { get: object } ? P : never }[ApiPath];

export type NmsClient = Client<paths>;

export interface NmsClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8080` (the paths carry /api/v1); in a browser on the same origin, `""`. */
  baseUrl: string;
  /**
   * The bearer token (a session token from POST /auth/sessions, or an API token), or a function read on every request
   * (so a login or logout changes what the next request sends). Null: no Authorization header (public-dashboard reads).
   */
  token?: string | null | (() => string | null | undefined);
  /** A fetch to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/**
 * A client for every route of the API, typed from its OpenAPI document.
 *
 * ```ts
 * const api = createClient({ baseUrl: "http://127.0.0.1:8080", token: process.env.NMS_TOKEN });
 * const { data, error } = await api.GET("/api/v1/nodes/{id}", { params: { path: { id } } });
 * ```
 */
export function createClient(options: NmsClientOptions): NmsClient {
  const client = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    fetch: options.fetch,
    headers: options.headers,
  });
  const auth: Middleware = {
    onRequest({ request }) {
      const token = typeof options.token === "function" ? options.token() : options.token;
      if (token) request.headers.set("Authorization", `Bearer ${token}`);
      return request;
    },
  };
  client.use(auth);
  return client;
}

/** A failed call: the HTTP status and the envelope's code and message (a body that is not the envelope gets code `http_<status>`). */
export class NmsApiError extends Error {
  override readonly name = "NmsApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Whether a value is the API's error envelope. */
export function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
  const e = (value as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof e === "object" && e !== null && typeof e.code === "string" && typeof e.message === "string";
}

/** The error of a failed answer as an NmsApiError. */
export function toApiError(error: unknown, response: Response): NmsApiError {
  if (isErrorEnvelope(error)) return new NmsApiError(response.status, error.error.code, error.error.message);
  return new NmsApiError(response.status, `http_${response.status}`, `The service answered ${response.status}.`);
}

/**
 * The data of an answer, or a thrown NmsApiError: `const nodes = await unwrap(api.GET("/api/v1/nodes"))`.
 * A success without a body (204) resolves to undefined.
 */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw toApiError(error, response);
  return data as T;
}

/** The header carrying the next page's cursor on keyset-paginated lists (pass it back as `?cursor=`). */
export const NEXT_CURSOR_HEADER = "X-Next-Cursor";

type Rows<P extends GetPath> = paths[P] extends { get: { responses: { 200: { content: { "application/json": infer R } } } } }
  ? R extends readonly (infer Row)[]
    ? Row
    : never
  : never;
type GetParams<P extends GetPath> = paths[P] extends { get: { parameters: infer Q } } ? Q : never;

/**
 * Every row of a keyset-paginated list, page after page (it follows `X-Next-Cursor` until the service sends none).
 *
 * ```ts
 * for await (const rule of paginate(api, "/api/v1/thresholds", { query: { limit: 200 } })) console.log(rule.metric);
 * ```
 */
export async function* paginate<P extends GetPath>(client: NmsClient, path: P, params?: Partial<GetParams<P>>): AsyncGenerator<Rows<P>, void, undefined> {
  let cursor: string | null = null;
  const base = (params ?? {}) as { query?: Record<string, unknown>; path?: Record<string, unknown> };
  do {
    const init = { params: { ...base, query: { ...(base.query ?? {}), ...(cursor ? { cursor } : {}) } } };
    const get = client.GET as unknown as (p: string, i: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    const { data, error, response } = await get(path, init);
    if (!response.ok) throw toApiError(error, response);
    for (const row of (data ?? []) as Rows<P>[]) yield row;
    cursor = response.headers.get(NEXT_CURSOR_HEADER);
  } while (cursor);
}

type HistoryQuery = NonNullable<GetParams<"/api/v1/alerts/history">["query"]>;

/**
 * Every alert history row (newest first), following the history's own cursor: `before` = the last row's
 * `recorded_at` exactly as received (microseconds), `before_id` = its id.
 */
export async function* alertHistory(
  client: NmsClient,
  query: Omit<HistoryQuery, "before" | "before_id"> = {},
): AsyncGenerator<Schemas["AlertHistoryRow"], void, undefined> {
  let before: { before: string; before_id: string } | null = null;
  const limit = query.limit ?? 100;
  for (;;) {
    const rows: Schemas["AlertHistoryRow"][] = await unwrap(
      client.GET("/api/v1/alerts/history", { params: { query: { ...query, limit, ...(before ?? {}) } } }),
    );
    for (const row of rows) yield row;
    if (rows.length < limit) return;
    const last: Schemas["AlertHistoryRow"] = rows[rows.length - 1];
    before = { before: last.recorded_at, before_id: last.id };
  }
}

/** Logs in (POST /auth/sessions) and returns the session token; throws NmsApiError (401 `invalid_credentials` …). */
export async function login(client: NmsClient, username: string, password: string): Promise<Schemas["SessionCreated"]> {
  return unwrap(client.POST("/api/v1/auth/sessions", { body: { username, password } }));
}
