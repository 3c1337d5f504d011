/**
 * What the HTTP channel kinds (webhook, pager, servicedesk) share: `Retry-After` parsing, the mapping of an HTTP
 * status or a network failure to a DeliveryError, and a per-send timeout joined to the caller's abort signal.
 *
 * Messages are built from the status or the error's code only, never from an error's own message: undici's messages
 * name the host and port ("connect ECONNREFUSED 10.0.0.5:443"), and a URL may carry a key in its path or query.
 */
import { DeliveryError } from "../contract.js";

/**
 * `Retry-After` in milliseconds from `nowMs`: delay-seconds ("120") or an HTTP date ("Wed, 21 Oct 2026 07:28:00 GMT");
 * a date in the past is 0. Null when absent or not understood. A list (repeated header) uses its first value.
 */
export function parseRetryAfter(header: string | readonly string[] | null | undefined, nowMs: number = Date.now()): number | null {
  const value = (Array.isArray(header) ? header[0] : header) as string | undefined | null;
  if (typeof value !== "string") return null;
  const text = value.trim();
  if (text === "") return null;
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : null;
  }
  // An HTTP date names its weekday and month in letters; a bare number or other text is not one.
  if (!/[A-Za-z]{3}/.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

/** True for the statuses worth another attempt: 408, 425, 429 and every 5xx. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * The DeliveryError of a non-2xx answer: "HTTP <status>". 408, 425, 429 and 5xx are retryable (with `retryAfterMs`
 * from `Retry-After` when given); any other status (400, 401, 403, 404, a redirect, …) ends the delivery.
 */
export function httpFailure(status: number, retryAfterHeader: string | readonly string[] | null | undefined, nowMs: number = Date.now()): DeliveryError {
  const retryable = retryableStatus(status);
  const redirect = status >= 300 && status < 400 ? " (redirects are not followed)" : "";
  return new DeliveryError(`HTTP ${status}${redirect}`, "http_status", {
    retryable,
    status,
    retryAfterMs: retryable ? parseRetryAfter(retryAfterHeader, nowMs) : null,
  });
}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  cause?: { code?: unknown; name?: unknown };
  errors?: readonly { code?: unknown }[];
}

function codeOf(err: unknown): string | null {
  const e = err as ErrorLike | null | undefined;
  const code = e?.code ?? e?.cause?.code ?? e?.errors?.find((x) => typeof x?.code === "string")?.code;
  return typeof code === "string" ? code : null;
}

/**
 * The DeliveryError of a request that got no HTTP answer: "timeout", "connection refused", "connection reset",
 * "name not resolved", "TLS error (<code>)", "aborted" or "network error (<code>)". All are retryable except a TLS
 * certificate failure, which another attempt would meet again. A DeliveryError passes through unchanged.
 * `timedOut` says the send's own deadline fired (see {@link sendSignal}).
 */
export function networkFailure(err: unknown, timedOut = false): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const e = err as ErrorLike | null | undefined;
  const name = typeof e?.name === "string" ? e.name : "";
  const code = codeOf(err);
  if (
    timedOut ||
    name === "TimeoutError" ||
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    code === "UND_ERR_CONNECT_TIMEOUT" ||
    code === "ETIMEDOUT"
  ) {
    return new DeliveryError("timeout", "timeout", { retryable: true, status: null });
  }
  switch (code) {
    case "ECONNREFUSED":
      return new DeliveryError("connection refused", "connection_refused", { retryable: true, status: null });
    case "ECONNRESET":
    case "EPIPE":
    case "UND_ERR_SOCKET":
    case "UND_ERR_CLOSED":
      return new DeliveryError("connection reset", "connection_reset", { retryable: true, status: null });
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new DeliveryError("name not resolved", "dns", { retryable: true, status: null });
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return new DeliveryError("host unreachable", "unreachable", { retryable: true, status: null });
  }
  if (code && /CERT|SELF_SIGNED|TLS|SSL|VERIFY/i.test(code)) return new DeliveryError(`TLS error (${code})`, "tls", { retryable: false, status: null });
  if (name === "AbortError" || code === "UND_ERR_ABORTED" || code === "ABORT_ERR")
    return new DeliveryError("aborted", "aborted", { retryable: true, status: null });
  return new DeliveryError(code ? `network error (${code})` : "network error", "network", { retryable: true, status: null });
}

/** A send's signal: the caller's (shutdown, the worker's own limit) joined to the channel's `timeout_ms`. */
export function sendSignal(signal: AbortSignal, timeoutMs: number): { signal: AbortSignal; timedOut: () => boolean } {
  const deadline = AbortSignal.timeout(timeoutMs);
  return { signal: AbortSignal.any([signal, deadline]), timedOut: () => deadline.aborted };
}

/** The first value of a response header. */
export function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const v = headers[name];
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
}

/**
 * A channel's http(s) URL, as the kinds' `validate` checks it: it must parse, be http or https, and carry no
 * credentials (a URL is answered in the channel's view, so a password in it would leak; secrets go in secret fields).
 */
export function checkHttpUrl(value: unknown, credentialsHint = ""): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new Error("config.url must be an http or https URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("config.url must be an http or https URL.");
  if (url.username || url.password) throw new Error(`config.url must not carry credentials${credentialsHint}.`);
  return url;
}
