/**
 * The edge validation of a forwarding destination body, one stable code per failure (docs/errors.md, "Codes of the
 * forwarding plugin"). Messages name the field and the rule, never a secret's text (nor a fragment of it: JSON and key
 * parse errors are not passed on, since they quote the input).
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { assertPoolName, badRequest, ipFamily } from "../../../core/index.js";
import { filterProblem } from "./filter.js";
import type { DestKind, Filter, SourceKind } from "./types.js";

/** Which stream each destination kind can tee (spec: the kind pairing). `warehouse` takes any. */
export const KIND_SOURCES: Readonly<Record<DestKind, readonly SourceKind[]>> = {
  syslog_udp: ["syslog"],
  syslog_tcp: ["syslog"],
  syslog_tls: ["syslog"],
  snmp_trap_udp: ["trap"],
  flow_udp: ["flow"],
  warehouse: ["syslog", "trap", "flow"],
};

/** The kinds that speak TLS, so the only ones `ca_cert` applies to. */
export const TLS_KINDS: readonly DestKind[] = ["syslog_tls", "warehouse"];

/** The largest `rate_limit_per_sec` (int32). */
export const RATE_LIMIT_MAX = 2147483647;
/** Most certificates one `ca_cert` holds. */
export const CA_CERT_MAX = 100;

const LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const PORT = /^[0-9]{1,5}$/;

/** `host:port` split; host without brackets. */
export interface Target {
  host: string;
  port: number;
}

const invalidTarget = (why: string) => badRequest("invalid_target", `target must be host:port (${why}).`);

/** A hostname as RFC 1123 writes it: dot-separated labels of letters, digits and inner hyphens, at most 253 characters. */
export function isHostname(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  const labels = host.split(".");
  if (!labels.every((l) => LABEL.test(l))) return false;
  // All-numeric labels are an IPv4 address or nothing ("10.1", "300.1.1.1" are not names a resolver should see).
  return !labels.every((l) => /^[0-9]+$/.test(l));
}

/**
 * `target` as `host:port`: a hostname (RFC 1123), an IPv4 address, or an IPv6 address in brackets (`[2001:db8::1]:514`,
 * no zone); the port 1 to 65535. Throws 400 invalid_target.
 */
export function parseTarget(target: string): Target {
  let host: string;
  let portText: string;
  if (target.startsWith("[")) {
    const close = target.indexOf("]");
    if (close < 0 || target[close + 1] !== ":") throw invalidTarget("an IPv6 address in brackets, then :port");
    host = target.slice(1, close);
    portText = target.slice(close + 2);
    if (ipFamily(host) !== 6) throw invalidTarget("the bracketed host must be an IPv6 address without a zone");
  } else {
    const colon = target.lastIndexOf(":");
    if (colon < 0) throw invalidTarget("the port is missing");
    host = target.slice(0, colon);
    portText = target.slice(colon + 1);
    if (host.includes(":")) throw invalidTarget("an IPv6 address goes in brackets: [2001:db8::1]:514");
    if (!(ipFamily(host) === 4 || isHostname(host))) throw invalidTarget("the host must be a hostname or an IPv4 address");
  }
  const port = PORT.test(portText) ? Number(portText) : NaN;
  if (!(port >= 1 && port <= 65535)) throw invalidTarget("the port must be 1 to 65535");
  return { host, port };
}

/** 400 kind_mismatch unless `dest_kind` can carry `source_kind`. */
export function checkKindPair(destKind: DestKind, sourceKind: SourceKind): void {
  if (!KIND_SOURCES[destKind].includes(sourceKind))
    throw badRequest("kind_mismatch", `A ${destKind} destination tees ${KIND_SOURCES[destKind].join(" or ")}, not ${sourceKind}.`);
}

/** 400 invalid_rate_limit unless null or an integer from 1 to 2147483647. */
export function checkRateLimit(rate: number | null | undefined): void {
  if (rate === null || rate === undefined) return;
  if (!Number.isInteger(rate) || rate < 1 || rate > RATE_LIMIT_MAX)
    throw badRequest("invalid_rate_limit", `rate_limit_per_sec is null (no ceiling) or an integer from 1 to ${RATE_LIMIT_MAX}.`);
}

const PEM_BEGIN = "-----BEGIN ";
const CERT_BEGIN = "-----BEGIN CERTIFICATE-----";
const CERT_END = "-----END CERTIFICATE-----";

/**
 * `ca_cert` as stored: null or "" clears it (null); otherwise one or more PEM `CERTIFICATE` blocks that node's
 * X509Certificate reads (text between blocks, such as a bundle's comments, is allowed; any other PEM block, a private
 * key above all, is refused: ca_cert is answered back). Only on TLS kinds. Throws 400 invalid_ca_cert.
 */
export function checkCaCert(caCert: string | null | undefined, destKind: DestKind): string | null {
  if (caCert === null || caCert === undefined || caCert.trim() === "") return null;
  const fail = (why: string) => badRequest("invalid_ca_cert", `ca_cert ${why}.`);
  if (!TLS_KINDS.includes(destKind)) throw fail(`applies to ${TLS_KINDS.join(" and ")} destinations only`);
  let count = 0;
  for (let at = caCert.indexOf(PEM_BEGIN); at >= 0; at = caCert.indexOf(PEM_BEGIN, at)) {
    if (!caCert.startsWith(CERT_BEGIN, at)) throw fail("holds a PEM block that is not a CERTIFICATE (never put a key here: ca_cert is not secret)");
    const end = caCert.indexOf(CERT_END, at);
    if (end < 0) throw fail("has a certificate without its END line");
    const block = caCert.slice(at, end + CERT_END.length);
    if (block.indexOf(PEM_BEGIN, CERT_BEGIN.length) >= 0) throw fail("has a certificate without its END line");
    if (++count > CA_CERT_MAX) throw fail(`holds more than ${CA_CERT_MAX} certificates`);
    try {
      new X509Certificate(block);
    } catch {
      throw fail(`certificate ${count} does not parse as X.509`);
    }
    at = end + CERT_END.length;
  }
  if (count === 0) throw fail("must be PEM certificates (-----BEGIN CERTIFICATE----- ...)");
  return caCert;
}

/** 400 community_not_allowed when a community is given to a kind other than snmp_trap_udp. */
export function checkCommunity(community: string | null | undefined, destKind: DestKind): void {
  if (community !== null && community !== undefined && destKind !== "snmp_trap_udp")
    throw badRequest("community_not_allowed", "community applies to snmp_trap_udp destinations only.");
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/**
 * `service_account_json`: a cloud service-account key file, as the cloud console downloads it. It must be a JSON object
 * with `type` "service_account", `client_email` (the account, an e-mail address), `private_key` (an RSA private key in
 * PEM, which signs the RS256 JWT exchanged for an access token) and `token_uri` (the https URL of that exchange);
 * `project_id` and `private_key_id` are strings when present. The file's other fields (`client_id`, `auth_uri`,
 * `auth_provider_x509_cert_url`, `client_x509_cert_url`, `universe_domain`) are kept and not checked. Only on
 * `warehouse`. Throws 400 invalid_service_account (the message never quotes the key).
 */
export function checkServiceAccount(json: string | null | undefined, destKind: DestKind): void {
  if (json === null || json === undefined) return;
  const fail = (why: string) => badRequest("invalid_service_account", `service_account_json ${why}.`);
  if (destKind !== "warehouse") throw fail("applies to warehouse destinations only");
  let key: unknown;
  try {
    key = JSON.parse(json);
  } catch {
    throw fail("is not JSON");
  }
  if (typeof key !== "object" || key === null || Array.isArray(key)) throw fail("is not a JSON object");
  const k = key as Record<string, unknown>;
  if (k.type !== "service_account") throw fail('must have type "service_account"');
  if (typeof k.client_email !== "string" || !EMAIL.test(k.client_email)) throw fail("must have client_email, an e-mail address");
  for (const f of ["project_id", "private_key_id"]) if (f in k && typeof k[f] !== "string") throw fail(`has a ${f} that is not a string`);
  if (typeof k.token_uri !== "string") throw fail("must have token_uri, an https URL");
  let uri: URL;
  try {
    uri = new URL(k.token_uri);
  } catch {
    throw fail("must have token_uri, an https URL");
  }
  if (uri.protocol !== "https:" || uri.username || uri.password) throw fail("must have token_uri, an https URL (without credentials)");
  if (typeof k.private_key !== "string" || !k.private_key.includes("-----BEGIN")) throw fail("must have private_key, a PEM private key");
  let type: string | undefined;
  try {
    type = createPrivateKey({ key: k.private_key, format: "pem" }).asymmetricKeyType;
  } catch {
    throw fail("has a private_key that does not parse as a PEM private key");
  }
  if (type !== "rsa") throw fail("has a private_key that is not an RSA key (RS256 signs the token request)");
}

/** 400 invalid_filter with the reason unless the filter checks (null = forward the whole stream). */
export function checkFilter(filter: Filter | null | undefined): void {
  if (filter === null || filter === undefined) return;
  const problem = filterProblem(filter);
  if (problem) throw badRequest("invalid_filter", `filter: ${problem}.`);
}

/** 400 invalid_pool unless null or a pool name. */
export const checkPool = (pool: string | null | undefined): void => assertPoolName(pool);
