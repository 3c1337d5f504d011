/** The REST API of a running service, for the CLI commands that work through it (accounts, tokens, sweep, report). */

/** A usage mistake: the CLI says what is wrong and exits 2. */
export class CliUsageError extends Error {}

/** A non-2xx answer of the service: its status and error envelope. */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ConnectionOptions {
  /** Base URL of the service (or NMS_URL); with it the commands go through the API. */
  url?: string;
  /** A session or API token (or NMS_TOKEN). */
  token?: string;
  /** Log in with these instead of a token (POST /api/v1/auth/sessions); the session is ended afterwards. */
  username?: string;
  password?: string;
}

/** The service's URL when one is given (option first, then NMS_URL): the API path; none: the offline path. */
export function serviceUrl(o: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): string | null {
  const raw = o.url ?? env.NMS_URL;
  if (!raw) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new CliUsageError(`--url: "${raw}" is not a URL (e.g. http://127.0.0.1:3000)`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new CliUsageError(`--url: "${raw}" is not an http:// or https:// URL`);
  return raw.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
}

export class ApiConnection {
  private constructor(
    readonly baseUrl: string,
    private token: string,
    private readonly session: boolean,
  ) {}

  /** Connects with a token, or logs in with a username and password. */
  static async open(baseUrl: string, o: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): Promise<ApiConnection> {
    if (o.username !== undefined || o.password !== undefined) {
      if (!o.username || !o.password) throw new CliUsageError("logging in needs both a username and a password");
      const anon = new ApiConnection(baseUrl, "", false);
      const created = await anon.json<{ token: string }>("POST", "/auth/sessions", { username: o.username, password: o.password });
      return new ApiConnection(baseUrl, created.token, true);
    }
    const token = o.token ?? env.NMS_TOKEN;
    if (!token) throw new CliUsageError(`${baseUrl} needs a token (--token or NMS_TOKEN) or a login (a username and password)`);
    return new ApiConnection(baseUrl, token, false);
  }

  /** One call; throws ServiceError on a non-2xx answer, with the service's message. */
  async request(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`${this.baseUrl} could not be reached (${cause?.code ?? cause?.message ?? (err as Error).message})`);
    }
    if (!res.ok) {
      const envelope = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
      const code = envelope?.error?.code ?? `http_${res.status}`;
      throw new ServiceError(res.status, code, `the service answered ${res.status} ${code}: ${envelope?.error?.message ?? "no message"}`);
    }
    return res;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.request(method, path, body);
    return (res.status === 204 ? undefined : await res.json()) as T;
  }

  /** Ends the session it opened (a token given by the caller is left alone). */
  async close(): Promise<void> {
    if (!this.session) return;
    await this.request("DELETE", "/auth/sessions/current").catch(() => undefined);
    this.token = "";
  }
}

/** Opens a connection, runs `fn` and closes it (ends a login session) whatever happens. */
export async function withApi<T>(baseUrl: string, o: ConnectionOptions, fn: (api: ApiConnection) => Promise<T>): Promise<T> {
  const api = await ApiConnection.open(baseUrl, o);
  try {
    return await fn(api);
  } finally {
    await api.close();
  }
}

/** Resolves after `ms` (for following a job that the service runs). */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
