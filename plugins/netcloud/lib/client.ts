/**
 * The netcloud platform's REST client, on undici: organizations → networks → devices, and device statuses.
 *
 * - Authentication: `Authorization: Bearer <api key>` on every request; the key is sent to the base URL's host only.
 * - Pagination: RFC 5988 `Link: <…>; rel=next` headers (the platform's `perPage` / `startingAfter`), followed only
 *   while they stay on the base URL's origin.
 * - Rate limits: a 429 is waited out for its `Retry-After` (bounded by `maxRetryWaitMs`, at most `maxRetries` times).
 * - Redirects: followed (at most 3) only to the same scheme, host and port; any other answers redirect_refused.
 * - Errors are {@link NetcloudError}s whose message names the failure kind and status only: never the key, a URL's
 *   query, or upstream text.
 */
import { rootCertificates } from "node:tls";
import { Agent, request, type Dispatcher } from "undici";

export type NetcloudFailure =
  /** 401 or 403: the platform refused the key. */
  | "key_refused"
  /** 404: the organization (or route) is unknown to the platform under this key. */
  | "not_found"
  /** No answer: connection refused or reset, name not resolved. */
  | "unreachable"
  | "timeout"
  /** 429 past the retries, or a Retry-After longer than allowed. */
  | "rate_limited"
  /** A redirect (or a next link) to another origin or scheme. */
  | "redirect_refused"
  /** TLS failure (certificate not trusted, wrong host). */
  | "tls"
  /** An answer that is not the JSON shape asked for, or too big. */
  | "bad_response"
  /** Any other non-2xx status. */
  | "http_status";

export class NetcloudError extends Error {
  constructor(
    readonly kind: NetcloudFailure,
    readonly status: number | null = null,
    /** A detail for the log (an error code, a path): never a key or upstream text. */
    readonly detail: string | null = null,
  ) {
    super(status === null ? `netcloud: ${kind}` : `netcloud: ${kind} (HTTP ${status})`);
    this.name = "NetcloudError";
  }
}

export interface CloudOrganization {
  id: string;
  name: string;
}
export interface CloudNetwork {
  id: string;
  name: string;
}
export interface CloudDevice {
  serial: string;
  name: string | null;
  networkId: string | null;
  model: string | null;
  lanIp: string | null;
}
export interface CloudDeviceStatus {
  serial: string;
  status: string;
  lanIp: string | null;
}

export interface ClientOptions {
  /** The checked base URL (see {@link checkBaseUrl}). */
  baseUrl: URL;
  apiKey: string;
  dispatcher: Dispatcher;
  timeoutMs: number;
  maxRetryWaitMs: number;
  maxRetries: number;
  pageSize: number;
  maxPages: number;
  /** Waits (tests shorten nothing: the real timer). */
  sleep?: (ms: number) => Promise<void>;
}

/** Most bytes one answer may carry (a page of 1000 devices is well under 1 MiB). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const MAX_REDIRECTS = 3;

/** An agent trusting the system roots plus `caPem` (when given). One per plugin: it pools the connections. */
export function netcloudAgent(caPem: string | null, timeoutMs: number): Agent {
  return new Agent({
    connect: { ...(caPem ? { ca: [...rootCertificates, caPem] } : {}), timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
}

/** Whether `host` (and `port`) match one allow-list entry: "host", "host:port" or "*.domain". */
export function hostAllowed(url: URL, allowed: readonly string[]): boolean {
  const host = url.hostname.toLowerCase();
  const port = url.port || "443";
  return allowed.some((raw) => {
    const entry = raw.trim().toLowerCase();
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
    if (!m) return false;
    const [, h, p] = m;
    if (p !== undefined && p !== port) return false;
    if (h.startsWith("*.")) return host.endsWith(h.slice(1)) && host.length > h.length - 1;
    return host === h;
  });
}

/**
 * The base URL as used: https, no credentials, query or fragment, a host on the allow-list, no trailing slash.
 * Answers the reason it is refused instead, for the 400's message (never echoing the URL).
 */
export function checkBaseUrl(raw: string, allowed: readonly string[]): URL | string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return "base_url is not a URL.";
  }
  if (url.protocol !== "https:") return "base_url must be an https URL.";
  if (url.username || url.password) return "base_url must not carry credentials.";
  if (url.search || url.hash) return "base_url must not carry a query or a fragment.";
  if (!hostAllowed(url, allowed)) return "base_url names a host that is not on pluginConfig.netcloud.allowedHosts.";
  url.pathname = url.pathname.replace(/\/+$/, "");
  return url;
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date; null when absent or not understood. */
export function retryAfterMs(header: string | string[] | undefined, nowMs = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (typeof value !== "string" || value.trim() === "") return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[A-Za-z]{3}/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** The `rel="next"` target of a Link header, or null. */
export function nextLink(header: string | string[] | undefined): string | null {
  const values = Array.isArray(header) ? header : header ? [header] : [];
  for (const value of values) {
    for (const part of value.split(/,(?=\s*<)/)) {
      const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
      if (m && /(?:^|;)\s*rel\s*=\s*"?(?:[^";]*\s)?next(?:\s[^";]*)?"?\s*(?:;|$)/i.test(m[2])) return m[1];
    }
  }
  return null;
}

function failureOf(err: unknown): NetcloudError {
  if (err instanceof NetcloudError) return err;
  const e = err as { name?: string; code?: string; cause?: { code?: string; name?: string } } | null;
  const code = e?.code ?? e?.cause?.code ?? "";
  const name = e?.name ?? "";
  if (name === "TimeoutError" || name === "AbortError" || /TIMEOUT/.test(code) || code === "ETIMEDOUT") return new NetcloudError("timeout", null, code || name);
  if (/CERT|SSL|TLS|ERR_TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return new NetcloudError("tls", null, code);
  return new NetcloudError("unreachable", null, code || name || null);
}

const sameOrigin = (a: URL, b: URL) => a.protocol === b.protocol && a.host === b.host;

const text = (v: unknown): string | null => (typeof v === "string" ? v : typeof v === "number" ? String(v) : null);

export class NetcloudClient {
  private readonly sleep: (ms: number) => Promise<void>;
  /** Requests made (every attempt, redirects included): for tests and the sync's log line. */
  requests = 0;

  constructor(private readonly o: ClientOptions) {
    this.sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  async organizations(): Promise<CloudOrganization[]> {
    const rows = await this.list("/organizations");
    return rows.flatMap((r) => {
      const id = text(r.id);
      return id ? [{ id, name: text(r.name) ?? id }] : [];
    });
  }

  async networks(orgId: string): Promise<CloudNetwork[]> {
    const rows = await this.list(`/organizations/${encodeURIComponent(orgId)}/networks`);
    return rows.flatMap((r) => {
      const id = text(r.id);
      return id ? [{ id, name: text(r.name) ?? id }] : [];
    });
  }

  async devices(orgId: string): Promise<CloudDevice[]> {
    const rows = await this.list(`/organizations/${encodeURIComponent(orgId)}/devices`);
    return rows.flatMap((r) => {
      const serial = text(r.serial);
      return serial ? [{ serial, name: text(r.name), networkId: text(r.networkId), model: text(r.model), lanIp: text(r.lanIp) }] : [];
    });
  }

  async statuses(orgId: string): Promise<CloudDeviceStatus[]> {
    const rows = await this.list(`/organizations/${encodeURIComponent(orgId)}/devices/statuses`);
    return rows.flatMap((r) => {
      const serial = text(r.serial);
      const status = text(r.status);
      return serial && status ? [{ serial, status: status.toLowerCase(), lanIp: text(r.lanIp) }] : [];
    });
  }

  /** Every page of a list, following rel=next links on the base URL's origin. */
  private async list(path: string): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    let url: URL | null = new URL(`${this.o.baseUrl.href.replace(/\/+$/, "")}${path}`);
    if (path !== "/organizations") url.searchParams.set("perPage", String(this.o.pageSize));
    for (let pages = 0; url; pages++) {
      if (pages >= this.o.maxPages) throw new NetcloudError("bad_response", null, `more than ${this.o.maxPages} pages`);
      const { body, link } = await this.get(url);
      if (!Array.isArray(body)) throw new NetcloudError("bad_response", null, "not an array");
      for (const row of body) if (row && typeof row === "object" && !Array.isArray(row)) out.push(row as Record<string, unknown>);
      const next = nextLink(link);
      if (!next) break;
      let target: URL;
      try {
        target = new URL(next, url);
      } catch {
        throw new NetcloudError("bad_response", null, "unreadable next link");
      }
      if (!sameOrigin(target, this.o.baseUrl)) throw new NetcloudError("redirect_refused", null, "next link to another origin");
      url = target;
    }
    return out;
  }

  /** One GET, with 429 retries and same-origin redirects. */
  private async get(start: URL): Promise<{ body: unknown; link: string | string[] | undefined }> {
    let url = start;
    let redirects = 0;
    let retries = 0;
    for (;;) {
      this.requests++;
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          method: "GET",
          headers: { authorization: `Bearer ${this.o.apiKey}`, accept: "application/json" },
          dispatcher: this.o.dispatcher,
          signal: AbortSignal.timeout(this.o.timeoutMs),
        });
      } catch (err) {
        throw failureOf(err);
      }
      const status = res.statusCode;
      if (status >= 200 && status < 300) {
        const body = await this.readJson(res);
        return { body, link: res.headers.link };
      }
      await res.body.dump().catch(() => undefined);
      if (status === 429) {
        const wait = retryAfterMs(res.headers["retry-after"]) ?? 1000;
        if (retries >= this.o.maxRetries || wait > this.o.maxRetryWaitMs) throw new NetcloudError("rate_limited", 429, `retry-after ${wait} ms`);
        retries++;
        await this.sleep(wait);
        continue;
      }
      if (status >= 300 && status < 400) {
        const location = res.headers.location;
        let target: URL | null = null;
        try {
          target = typeof location === "string" ? new URL(location, url) : null;
        } catch {
          target = null;
        }
        if (!target || !sameOrigin(target, this.o.baseUrl) || redirects >= MAX_REDIRECTS) {
          throw new NetcloudError("redirect_refused", status, target ? `to ${target.protocol}//${target.host}` : "no location");
        }
        redirects++;
        url = target;
        continue;
      }
      if (status === 401 || status === 403) throw new NetcloudError("key_refused", status);
      if (status === 404) throw new NetcloudError("not_found", status, url.pathname);
      throw new NetcloudError("http_status", status, url.pathname);
    }
  }

  private async readJson(res: Dispatcher.ResponseData): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_BODY_BYTES) {
          res.body.destroy();
          throw new NetcloudError("bad_response", res.statusCode, "answer too big");
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      throw failureOf(err);
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      throw new NetcloudError("bad_response", res.statusCode, "not JSON");
    }
  }
}
