import { Inject, Injectable } from "@tsed/di";
import { ApiError, badRequest, isIpAddress, isPgError, notFound, PG_ERROR, pgConstraint, type Queryable, type Scope } from "../../../core/index.js";
import type { BodyMatch, DnsCheckBody, DnsCheckView, ExpectedStatus, JsonExtractRule, UrlCheckBody, UrlCheckView } from "../models/CheckModels.js";
import { CheckRepository, type DnsCheckRecord, type UrlCheckRecord } from "../repositories/CheckRepository.js";
import { InventoryScope } from "./InventoryScope.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/**
 * Metric names the URL monitor emits for every check by itself; a json_extract rule
 * may not take one of them (its samples would mix with the monitor's own).
 */
export const URL_MONITOR_METRICS: readonly string[] = Object.freeze([
  "url_up",
  "url_status_code",
  "url_response_ms",
  "url_body_bytes",
  "url_tls_expiry_days",
  "url_body_match",
]);

export const URL_CHECK_DEFAULTS = Object.freeze({
  method: "GET",
  timeout_ms: 5000,
  follow_redirects: true,
  verify_tls: true,
  expected_status: Object.freeze({ kind: "two_xx" }),
  body_match: null,
  body_max_bytes: 65536,
  json_extract: Object.freeze([]),
  credential_id: null,
});

export const DNS_CHECK_DEFAULTS = Object.freeze({
  record_type: "A",
  resolver_ip: null,
  resolver_port: 53,
  timeout_ms: 2000,
  max_depth: 5,
});

/** Most parts one json_extract path may have. */
export const JSON_PATH_MAX_PARTS = 32;

const invalid = (message: string) => badRequest("validation_failed", message);

// One path part: a name (no dot, bracket or whitespace) or an array index (0, or digits without a leading zero).
const INDEX = /^(0|[1-9][0-9]{0,8})$/;
const NAME = /^[^.[\]\s]+$/;
const DIGITS = /^[0-9]+$/;

/**
 * The parts of a json_extract path (spec: "a dot-separated path to one number; indexes by number,
 * `items[0].value` accepted"): names and array indexes separated by dots, an index also written
 * in brackets, so `items[0].value` and `items.0.value` both give ["items", "0", "value"], and
 * `[2].x` gives ["2", "x"]. Returns null when the path is malformed (an empty part, an unclosed
 * or non-numeric bracket, an index with a leading zero, whitespace) or has more than
 * JSON_PATH_MAX_PARTS parts. Only validates: the path is stored and returned as sent, and the
 * poller's evaluator reads both spellings.
 */
export function parseJsonPath(path: string): string[] | null {
  const parts: string[] = [];
  let rest = path;
  let first = true;
  while (rest.length) {
    if (rest.startsWith("[")) {
      const close = rest.indexOf("]");
      if (close < 0) return null;
      const index = rest.slice(1, close);
      if (!INDEX.test(index)) return null;
      parts.push(index);
      rest = rest.slice(close + 1);
    } else {
      if (!first) {
        if (!rest.startsWith(".")) return null;
        rest = rest.slice(1);
      }
      const end = rest.search(/[.[]/);
      const part = end < 0 ? rest : rest.slice(0, end);
      if (!NAME.test(part) || (DIGITS.test(part) && !INDEX.test(part))) return null;
      parts.push(part);
      rest = end < 0 ? "" : rest.slice(end);
    }
    first = false;
  }
  if (!parts.length || parts.length > JSON_PATH_MAX_PARTS) return null;
  return parts;
}

/** A DNS name: labels of 1-63 letters, digits, `-` or `_` (no `-` at either end), at most 253 characters; one trailing dot allowed. */
export function isDnsName(name: string): boolean {
  const bare = name.endsWith(".") ? name.slice(0, -1) : name;
  if (bare.length < 1 || bare.length > 253) return false;
  return bare.split(".").every((label) => /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/.test(label));
}

function checkUrl(url: string): void {
  const refuse = () => invalid('"url" must be an absolute http or https URL without spaces.');
  if (/\s/.test(url) || [...url].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) throw refuse();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse();
  }
  if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || !parsed.hostname) throw refuse();
  if (parsed.username || parsed.password) {
    throw invalid('"url" must not carry a user name or password; give a credential of kind http in "credential_id" instead.');
  }
}

/** The expected_status shape each kind needs, keeping only that kind's fields. */
function checkExpectedStatus(s: ExpectedStatus | undefined): ExpectedStatus {
  if (!s) return { ...URL_CHECK_DEFAULTS.expected_status } as ExpectedStatus;
  const has = (f: "code" | "min" | "max") => s[f] !== undefined && s[f] !== null;
  switch (s.kind) {
    case "two_xx":
      if (has("code") || has("min") || has("max")) throw invalid('"expected_status" of kind two_xx takes no code, min or max.');
      return { kind: "two_xx" };
    case "exact":
      if (!has("code")) throw invalid('"expected_status.code" is required for kind exact.');
      if (has("min") || has("max")) throw invalid('"expected_status" of kind exact takes code only, not min or max.');
      return { kind: "exact", code: s.code };
    case "range":
      if (!has("min") || !has("max")) throw invalid('"expected_status.min" and "expected_status.max" are required for kind range.');
      if (has("code")) throw invalid('"expected_status" of kind range takes min and max, not code.');
      if (s.min! > s.max!) throw invalid('"expected_status.min" must not be greater than "expected_status.max".');
      return { kind: "range", min: s.min, max: s.max };
    default:
      throw invalid('"expected_status.kind" must be one of two_xx, exact, range.');
  }
}

function checkBodyMatch(m: BodyMatch | null | undefined): BodyMatch | null {
  if (m === undefined || m === null) return null;
  if (m.mode === "regex") {
    try {
      new RegExp(m.pattern);
    } catch {
      throw badRequest("invalid_regex", '"body_match.pattern" is not a regular expression that compiles.');
    }
  }
  return { mode: m.mode, pattern: m.pattern };
}

function checkJsonExtract(rules: JsonExtractRule[] | undefined): JsonExtractRule[] {
  if (!rules) return [];
  const seen = new Set<string>();
  return rules.map((r, i) => {
    if (URL_MONITOR_METRICS.includes(r.metric)) {
      throw invalid(`"json_extract.${i}.metric" names a metric the URL monitor already emits (${URL_MONITOR_METRICS.join(", ")}).`);
    }
    if (seen.has(r.metric)) throw invalid(`"json_extract.${i}.metric" repeats a metric of an earlier rule.`);
    seen.add(r.metric);
    if (parseJsonPath(r.path) === null) {
      throw badRequest(
        "invalid_json_path",
        `"json_extract.${i}.path" must be dot-separated names and array indexes (for example items.0.value or items[0].value), at most ${JSON_PATH_MAX_PARTS} parts.`,
      );
    }
    // Stored and answered exactly as sent: a client gets back the string it wrote.
    return { metric: r.metric, path: r.path };
  });
}

/** A foreign-key failure despite the row locks (cannot happen in one transaction, but never a 500). */
function mapForeignKey(err: unknown): never {
  if (isPgError(err, PG_ERROR.foreignKeyViolation)) {
    if (pgConstraint(err)?.includes("credential")) throw badRequest("unknown_reference", '"credential_id" names no stored credential of kind http.');
    throw notFound("No such node.");
  }
  throw err;
}

/** URL and DNS checks, one of each per node. Scope: a node outside the caller's folders answers 404 as if missing. */
@Injectable()
export class CheckService {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  @Inject(CheckRepository)
  private repo: CheckRepository;

  @Inject(InventoryScope)
  private scope: InventoryScope;

  async getUrlCheck(nodeId: string, scope: Scope): Promise<UrlCheckView> {
    await this.scope.assertNodeVisible(nodeId, scope);
    const found = await this.repo.findUrlCheck(nodeId);
    if (!found) throw notFound("This node has no URL check.");
    return found;
  }

  /** Validates every field beyond the schema and fills in the defaults of omitted ones. */
  resolveUrlCheck(body: UrlCheckBody): UrlCheckRecord {
    checkUrl(body.url);
    return {
      url: body.url,
      method: body.method ?? (URL_CHECK_DEFAULTS.method as UrlCheckRecord["method"]),
      timeout_ms: body.timeout_ms ?? URL_CHECK_DEFAULTS.timeout_ms,
      follow_redirects: body.follow_redirects ?? URL_CHECK_DEFAULTS.follow_redirects,
      verify_tls: body.verify_tls ?? URL_CHECK_DEFAULTS.verify_tls,
      expected_status: checkExpectedStatus(body.expected_status),
      body_match: checkBodyMatch(body.body_match),
      body_max_bytes: body.body_max_bytes ?? URL_CHECK_DEFAULTS.body_max_bytes,
      json_extract: checkJsonExtract(body.json_extract),
      credential_id: body.credential_id ?? null,
    };
  }

  /** Create or replace the node's URL check (omitted fields take their defaults). */
  async putUrlCheck(nodeId: string, body: UrlCheckBody, scope: Scope): Promise<UrlCheckView> {
    const record = this.resolveUrlCheck(body);
    return this.onVisibleNode(nodeId, scope, async (client) => {
      if (record.credential_id !== null) {
        const kind = await this.repo.lockCredentialKind(record.credential_id, client);
        if (kind !== "http") throw badRequest("unknown_reference", '"credential_id" names no stored credential of kind http.');
      }
      return this.repo.upsertUrlCheck(nodeId, record, client);
    });
  }

  async deleteUrlCheck(nodeId: string, scope: Scope): Promise<void> {
    await this.scope.assertNodeVisible(nodeId, scope);
    if (!(await this.repo.deleteUrlCheck(nodeId))) throw notFound("This node has no URL check.");
  }

  async getDnsCheck(nodeId: string, scope: Scope): Promise<DnsCheckView> {
    await this.scope.assertNodeVisible(nodeId, scope);
    const found = await this.repo.findDnsCheck(nodeId);
    if (!found) throw notFound("This node has no DNS check.");
    return found;
  }

  resolveDnsCheck(body: DnsCheckBody): DnsCheckRecord {
    if (!isDnsName(body.name)) {
      throw invalid('"name" must be a DNS name: dot-separated labels of 1 to 63 letters, digits, - or _, at most 253 characters.');
    }
    const resolver = body.resolver_ip ?? null;
    if (resolver !== null && !isIpAddress(resolver)) {
      throw invalid('"resolver_ip" must be an IPv4 or IPv6 address, or null for the system resolver.');
    }
    return {
      name: body.name,
      record_type: body.record_type ?? (DNS_CHECK_DEFAULTS.record_type as DnsCheckRecord["record_type"]),
      resolver_ip: resolver,
      resolver_port: body.resolver_port ?? DNS_CHECK_DEFAULTS.resolver_port,
      timeout_ms: body.timeout_ms ?? DNS_CHECK_DEFAULTS.timeout_ms,
      max_depth: body.max_depth ?? DNS_CHECK_DEFAULTS.max_depth,
    };
  }

  async putDnsCheck(nodeId: string, body: DnsCheckBody, scope: Scope): Promise<DnsCheckView> {
    const record = this.resolveDnsCheck(body);
    return this.onVisibleNode(nodeId, scope, (client) => this.repo.upsertDnsCheck(nodeId, record, client));
  }

  async deleteDnsCheck(nodeId: string, scope: Scope): Promise<void> {
    await this.scope.assertNodeVisible(nodeId, scope);
    if (!(await this.repo.deleteDnsCheck(nodeId))) throw notFound("This node has no DNS check.");
  }

  /** Runs `write` in one transaction with the node locked against deletion, after the scope check (404 when missing or hidden). */
  private async onVisibleNode<T>(nodeId: string, scope: Scope, write: (client: Queryable) => Promise<T>): Promise<T> {
    try {
      return await this.ctx.store.tx(async (client) => {
        if (!(await this.repo.lockNode(nodeId, client))) throw notFound("No such node.");
        await this.scope.assertNodeVisible(nodeId, scope, client);
        return write(client);
      });
    } catch (err) {
      if (err instanceof ApiError) throw err;
      return mapForeignKey(err);
    }
  }
}
