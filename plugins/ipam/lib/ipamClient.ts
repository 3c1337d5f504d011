/**
 * The IPAM REST client (a NetBox-like API): `Authorization: Token <t>`, `GET /api/dcim/sites/` and
 * `GET /api/ipam/prefixes/` with `?limit=&offset=`, following each page's absolute `next` link.
 *
 * The token goes only to base_url's origin: a `next` link on another scheme, host or port stops the sync
 * (foreign_next), and no redirect is followed (a 3xx stops it: redirect). Failures are IpamSyncError with a
 * stable class and a detail for the log; neither ever holds the token.
 */
import { rootCertificates } from "node:tls";
import { Agent, request } from "undici";
import { apiUrl, originKey } from "./origin.js";

export type SyncErrorClass = "auth_refused" | "http_status" | "redirect" | "timeout" | "connect" | "tls" | "bad_response" | "foreign_next" | "too_many_objects";

export class IpamSyncError extends Error {
  constructor(
    readonly errorClass: SyncErrorClass,
    /** For the log only: what went wrong, upstream text included (the token redacted). */
    readonly detail: string,
    readonly status: number | null = null,
  ) {
    super(`ipam sync failed: ${errorClass}`);
    this.name = "IpamSyncError";
  }
}

export interface IpamClientOptions {
  baseUrl: string;
  token: string;
  /** PEM certificates trusted besides the system roots. */
  caCertPem: string | null;
  timeoutMs: number;
  pageSize: number;
  maxObjects: number;
  maxResponseBytes: number;
}

export interface IpamSite {
  id: string;
  name: string;
  slug: string | null;
}

export interface IpamPrefix {
  id: string;
  prefix: string;
  /** Its site, as prefixSiteId() reads it. */
  site_id: string | null;
}

const TLS_CODES = /^(ERR_TLS|ERR_SSL|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|CERT_|ERR_CERT|HOSTNAME_MISMATCH)/;

/** The class of a transport error (undici / node codes). */
export function classifyTransportError(err: unknown): SyncErrorClass {
  const e = err as { code?: string; cause?: { code?: string } };
  const code = e?.code ?? "";
  const cause = e?.cause?.code ?? "";
  if (/TIMEOUT/.test(code) || /TIMEOUT/.test(cause)) return "timeout";
  if (TLS_CODES.test(code) || TLS_CODES.test(cause)) return "tls";
  return "connect";
}

export class IpamClient {
  private readonly dispatcher: Agent;
  private readonly origin: string;
  private objects = 0;

  constructor(private readonly opts: IpamClientOptions) {
    this.origin = originKey(opts.baseUrl);
    this.dispatcher = new Agent({
      connect: { ca: opts.caCertPem ? [...rootCertificates, opts.caCertPem] : undefined, timeout: opts.timeoutMs },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  async close(): Promise<void> {
    await this.dispatcher.close().catch(() => undefined);
  }

  async sites(): Promise<IpamSite[]> {
    const out: IpamSite[] = [];
    for await (const r of this.pages("/api/dcim/sites/")) {
      const id = idText(r.id);
      if (id === null) continue;
      out.push({ id, name: typeof r.name === "string" ? r.name : id, slug: typeof r.slug === "string" ? r.slug : null });
    }
    return out;
  }

  /** Every prefix with its site (`siteIdField`: see prefixSiteId). */
  async prefixes(siteIdField: string | null): Promise<IpamPrefix[]> {
    const out: IpamPrefix[] = [];
    for await (const r of this.pages("/api/ipam/prefixes/")) {
      const id = idText(r.id);
      if (id === null || typeof r.prefix !== "string") continue;
      out.push({ id, prefix: r.prefix, site_id: prefixSiteId(r, siteIdField) });
    }
    return out;
  }

  /** Every result of a list endpoint, page after page through `next`. */
  private async *pages(path: string): AsyncGenerator<Record<string, unknown>> {
    const first = apiUrl(this.opts.baseUrl, path);
    first.searchParams.set("limit", String(this.opts.pageSize));
    first.searchParams.set("offset", "0");
    let url: string | null = first.toString();
    const seen = new Set<string>();
    while (url) {
      if (seen.has(url)) throw new IpamSyncError("bad_response", `the next link repeats a page already read (${this.safe(url)})`);
      seen.add(url);
      const body = await this.getJson(url);
      const results = (body as { results?: unknown }).results;
      if (!Array.isArray(results)) throw new IpamSyncError("bad_response", `${this.safe(url)}: the answer has no results array`);
      this.objects += results.length;
      if (this.objects > this.opts.maxObjects) {
        throw new IpamSyncError("too_many_objects", `more than ${this.opts.maxObjects} sites and prefixes (pluginConfig.ipam.maxObjects)`);
      }
      for (const r of results) if (r && typeof r === "object" && !Array.isArray(r)) yield r as Record<string, unknown>;
      const next = (body as { next?: unknown }).next;
      if (next === null || next === undefined || next === "") url = null;
      else if (typeof next !== "string") throw new IpamSyncError("bad_response", `${this.safe(url)}: next is not a string`);
      else {
        let nextUrl: URL;
        try {
          nextUrl = new URL(next, url);
        } catch {
          throw new IpamSyncError("bad_response", `${this.safe(url)}: next is not a URL`);
        }
        // The token is never sent to another scheme, host or port than base_url's.
        if (originKey(nextUrl.toString()) !== this.origin) {
          throw new IpamSyncError("foreign_next", `the next link leaves ${this.origin} for ${originKey(nextUrl.toString())}; not followed`);
        }
        url = nextUrl.toString();
      }
    }
  }

  private async getJson(url: string): Promise<unknown> {
    if (originKey(url) !== this.origin) throw new IpamSyncError("foreign_next", `refused to send the token to ${originKey(url)}`);
    let res: Awaited<ReturnType<typeof request>>;
    try {
      // undici's request follows no redirect: a 3xx is answered as it is.
      res = await request(url, {
        method: "GET",
        dispatcher: this.dispatcher,
        headers: { authorization: `Token ${this.opts.token}`, accept: "application/json" },
        headersTimeout: this.opts.timeoutMs,
        bodyTimeout: this.opts.timeoutMs,
      });
    } catch (err) {
      throw new IpamSyncError(classifyTransportError(err), `${this.safe(url)}: ${this.redact(String((err as Error)?.message ?? err))}`);
    }
    let text: string;
    try {
      text = await this.readBody(res.body);
    } catch (err) {
      if (err instanceof IpamSyncError) throw err;
      throw new IpamSyncError(classifyTransportError(err), `${this.safe(url)}: reading the body: ${this.redact(String((err as Error)?.message ?? err))}`);
    }
    const status = res.statusCode;
    if (status >= 300 && status < 400) {
      const location = res.headers.location;
      throw new IpamSyncError("redirect", `${this.safe(url)}: ${status} redirect to ${this.redact(String(location ?? ""))}; not followed`, status);
    }
    if (status === 401 || status === 403) {
      throw new IpamSyncError("auth_refused", `${this.safe(url)}: ${status} ${this.redact(text.slice(0, 500))}`, status);
    }
    if (status < 200 || status >= 300) {
      throw new IpamSyncError("http_status", `${this.safe(url)}: ${status} ${this.redact(text.slice(0, 500))}`, status);
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      return parsed;
    } catch (err) {
      throw new IpamSyncError("bad_response", `${this.safe(url)}: the body is not a JSON object (${(err as Error).message})`, status);
    }
  }

  private async readBody(body: AsyncIterable<Buffer | Uint8Array> & { destroy?: (err?: Error) => unknown }): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > this.opts.maxResponseBytes) {
        body.destroy?.();
        throw new IpamSyncError("bad_response", `a response is larger than ${this.opts.maxResponseBytes} bytes (pluginConfig.ipam.maxResponseBytes)`);
      }
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks).toString("utf8");
  }

  /** A URL for the log: origin and path, the query kept (limit, offset); never the token, which is never in a URL. */
  private safe(url: string): string {
    return this.redact(url);
  }

  private redact(text: string): string {
    return this.opts.token ? text.split(this.opts.token).join("[redacted]") : text;
  }
}

/** An id as text (NetBox ids are integers; a string is kept as it is). */
export function idText(v: unknown): string | null {
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (typeof v === "string" && v.trim() !== "" && v.length <= 200) return v.trim();
  return null;
}

/**
 * The site a prefix belongs to: with `siteIdField`, its custom field of that name (an id, or an object with an id);
 * otherwise its `site` (NetBox up to 4.1) or its `scope` when `scope_type` is dcim.site (NetBox 4.2 on). Null = none.
 */
export function prefixSiteId(raw: Record<string, unknown>, siteIdField: string | null): string | null {
  const ref = (v: unknown): string | null => {
    if (v && typeof v === "object" && !Array.isArray(v)) return idText((v as { id?: unknown }).id);
    return idText(v);
  };
  if (siteIdField) {
    const cf = raw.custom_fields;
    if (!cf || typeof cf !== "object" || Array.isArray(cf)) return null;
    return ref((cf as Record<string, unknown>)[siteIdField]);
  }
  if (raw.site !== undefined && raw.site !== null) return ref(raw.site);
  if (raw.scope_type === "dcim.site") return ref(raw.scope) ?? ref(raw.scope_id);
  return null;
}
