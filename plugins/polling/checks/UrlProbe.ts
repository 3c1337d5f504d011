import type { TLSSocket } from "node:tls";
import { Agent, buildConnector, interceptors, request, type Dispatcher } from "undici";
import type { UrlCheckSpec } from "../poller/types.js";

/** One measured value of a check (the poller turns them into Samples for its node). */
export interface CheckMetric {
  metric: string;
  value: number;
}

export interface UrlProbeResult {
  metrics: CheckMetric[];
  /** Why the URL counts as down (for the log; never a secret, never the URL's userinfo); null when up. */
  reason: string | null;
}

/** Redirects followed when follow_redirects is on; the last 3xx is the answer beyond that. */
export const MAX_REDIRECTS = 10;

const DAY_MS = 86_400_000;

function statusExpected(status: number, expected: UrlCheckSpec["expected_status"]): boolean {
  switch (expected.kind) {
    case "two_xx":
      return status >= 200 && status <= 299;
    case "exact":
      return status === expected.code;
    case "range":
      return status >= expected.min && status <= expected.max;
  }
}

function describeExpected(expected: UrlCheckSpec["expected_status"]): string {
  switch (expected.kind) {
    case "two_xx":
      return "2xx";
    case "exact":
      return String(expected.code);
    case "range":
      return `${expected.min}-${expected.max}`;
  }
}

/** "items.0.value" or "items[0].value" → ["items", "0", "value"]. */
function pathParts(path: string): string[] {
  return path
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .filter((p) => p.length > 0);
}

/** The number at a dot path (numeric parts index arrays); null when missing or not a finite number. */
export function extractNumber(doc: unknown, path: string): number | null {
  let cur: unknown = doc;
  for (const part of pathParts(path)) {
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(part)) return null;
      cur = cur[Number(part)];
    } else if (cur !== null && typeof cur === "object" && Object.prototype.hasOwnProperty.call(cur, part)) {
      cur = (cur as Record<string, unknown>)[part];
    } else {
      return null;
    }
  }
  return typeof cur === "number" && Number.isFinite(cur) ? cur : null;
}

function bodyMatches(text: string, match: NonNullable<UrlCheckSpec["body_match"]>): boolean {
  switch (match.mode) {
    case "contains":
      return text.includes(match.pattern);
    case "not_contains":
      return !text.includes(match.pattern);
    case "regex":
      try {
        return new RegExp(match.pattern).test(text);
      } catch {
        return false;
      }
  }
}

/** A failure named by its kind and code, never by a message that could echo the URL or a header. */
function describeError(err: unknown, timeoutMs: number, timedOut: boolean): string {
  if (timedOut) return `timeout after ${timeoutMs} ms`;
  const e = err as { code?: string; name?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code;
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "name not resolved";
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_BODY_TIMEOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return `timeout after ${timeoutMs} ms`;
    case "UND_ERR_SOCKET":
    case "ECONNRESET":
      return "connection closed by the server";
    default:
      if (code && /CERT|SELF_SIGNED|TLS|SSL|VERIFY/i.test(code)) return `TLS verification failed (${code})`;
      return code ? `request failed (${code})` : `request failed (${e?.name ?? "error"})`;
  }
}

function authHeader(auth: UrlCheckSpec["auth"]): string | null {
  if (!auth) return null;
  if (auth.mode === "basic") return `Basic ${Buffer.from(`${auth.username}:${auth.password}`, "utf8").toString("base64")}`;
  return `Bearer ${auth.token}`;
}

type Body = Dispatcher.ResponseData["body"];

/** Drops a body unread: destroying it aborts the request, which the stream reports as an error nobody needs. */
function discard(body: Body): void {
  body.on("error", () => undefined);
  body.destroy();
}

/** Reads at most `max` bytes of a body, then stops (the rest is never read). */
async function readCapped(body: Body, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const room = max - size;
      if (chunk.length >= room) {
        chunks.push(chunk.subarray(0, room));
        size = max;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } finally {
    discard(body);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Runs one URL check with undici and never throws. Metrics:
 *
 * - `url_up` 1 when a response came, its status meets `expected_status` and the body match
 *   (when set) holds; else 0 (with the reason for the log);
 * - `url_status_code` of the final response (after redirects when following them);
 * - `url_response_ms` from sending to the final response's headers, redirects included;
 * - `url_body_bytes` bytes read (at most body_max_bytes), only when the body was read, which
 *   it is only when body_match or json_extract is set;
 * - `url_body_match` 1/0 when body_match is set (on the bytes read, as UTF-8);
 * - `url_tls_expiry_days` for https URLs: days until the configured server's certificate's
 *   valid_to (negative once expired; read with verify_tls off too);
 * - one metric per json_extract rule whose path leads to a number in the body parsed as JSON
 *   (a missing or non-numeric value, or a body cut at body_max_bytes, records nothing).
 */
export async function runUrlCheck(spec: UrlCheckSpec): Promise<UrlProbeResult> {
  const metrics: CheckMetric[] = [];
  const down = (reason: string): UrlProbeResult => ({ metrics: [{ metric: "url_up", value: 0 }, ...metrics], reason });

  let target: URL;
  try {
    target = new URL(spec.url);
  } catch {
    return down("the URL does not parse");
  }
  if (target.protocol !== "http:" && target.protocol !== "https:") return down(`unsupported scheme ${target.protocol}`);

  // Credentials in the URL itself become a Basic header (undici refuses userinfo in URLs); the auth credential wins.
  const headers: Record<string, string> = { "user-agent": "nms-url-check/1", accept: "*/*" };
  if (target.username || target.password) {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString("base64")}`;
    target.username = "";
    target.password = "";
  }
  const auth = authHeader(spec.auth);
  if (auth) headers.authorization = auth;

  let peerValidTo: string | null = null;
  const https = target.protocol === "https:";
  const base = buildConnector({ rejectUnauthorized: spec.verify_tls, timeout: spec.timeout_ms });
  const connect: buildConnector.connector = (opts, cb) =>
    base(opts, (...args) => {
      const socket = args[1] as TLSSocket | null;
      // The certificate of the configured server (not of a host a redirect leads to).
      if (https && peerValidTo === null && socket && typeof socket.getPeerCertificate === "function" && opts.hostname === target.hostname) {
        peerValidTo = socket.getPeerCertificate()?.valid_to ?? null;
      }
      cb(...args);
    });
  const agent = new Agent({ connect, headersTimeout: spec.timeout_ms, bodyTimeout: spec.timeout_ms, pipelining: 0 });
  const dispatcher: Dispatcher = spec.follow_redirects ? agent.compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTS })) : agent;

  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, spec.timeout_ms);
  const started = performance.now();
  try {
    const res = await request(target, {
      method: spec.method.toUpperCase() as Dispatcher.HttpMethod,
      headers,
      dispatcher,
      signal: abort.signal,
    });
    const elapsed = performance.now() - started;
    metrics.push({ metric: "url_status_code", value: res.statusCode }, { metric: "url_response_ms", value: Math.round(elapsed * 1000) / 1000 });
    if (https && peerValidTo !== null) {
      const validTo = Date.parse(peerValidTo);
      if (Number.isFinite(validTo)) metrics.push({ metric: "url_tls_expiry_days", value: Math.round(((validTo - Date.now()) / DAY_MS) * 100) / 100 });
    }

    let reason: string | null = statusExpected(res.statusCode, spec.expected_status)
      ? null
      : `status ${res.statusCode}, expected ${describeExpected(spec.expected_status)}`;

    if (spec.body_match || spec.json_extract.length) {
      const body = await readCapped(res.body, spec.body_max_bytes);
      metrics.push({ metric: "url_body_bytes", value: body.length });
      const text = body.toString("utf8");
      if (spec.body_match) {
        const ok = bodyMatches(text, spec.body_match);
        metrics.push({ metric: "url_body_match", value: ok ? 1 : 0 });
        if (!ok) reason ??= `body ${spec.body_match.mode === "not_contains" ? "contains" : "does not match"} the pattern`;
      }
      if (spec.json_extract.length) {
        let doc: unknown = undefined;
        try {
          doc = JSON.parse(text);
        } catch {
          // not JSON (or cut at body_max_bytes): no extracted metric this time
        }
        if (doc !== undefined) {
          for (const rule of spec.json_extract) {
            const v = extractNumber(doc, rule.path);
            if (v !== null) metrics.push({ metric: rule.metric, value: v });
          }
        }
      }
    } else {
      discard(res.body);
    }
    return reason === null ? { metrics: [{ metric: "url_up", value: 1 }, ...metrics], reason: null } : down(reason);
  } catch (err) {
    return down(describeError(err, spec.timeout_ms, timedOut));
  } finally {
    clearTimeout(timer);
    await agent.destroy().catch(() => undefined);
  }
}

/** The URL without userinfo, query or fragment (where secrets hide), for logs. */
export function loggableUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(unparsable URL)";
  }
}

/** The URL check as the poll loop calls it (`probes.url.run(spec)`): the metrics; why it was down goes to `onDown`. */
export class UrlProbe {
  constructor(private readonly onDown?: (reason: string, url: string) => void) {}

  async run(spec: UrlCheckSpec): Promise<CheckMetric[]> {
    const r = await runUrlCheck(spec);
    if (r.reason !== null) this.onDown?.(r.reason, loggableUrl(spec.url));
    return r.metrics;
  }
}
