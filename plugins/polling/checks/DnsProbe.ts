import { Resolver } from "node:dns/promises";
import { ipFamily, isIpAddress } from "../../../core/index.js";
import type { DnsCheckSpec } from "../poller/types.js";
import type { CheckMetric } from "./UrlProbe.js";

export interface DnsProbeResult {
  metrics: CheckMetric[];
  /** Why the check counts as down (for the log); null when up. */
  reason: string | null;
  /** The name that finally answered (after CNAME chasing). */
  answered_name: string | null;
}

const RECORD_TYPES = new Set(["A", "AAAA", "CNAME", "MX", "NS", "PTR", "SOA", "SRV", "TXT"]);

/** Error codes of node:dns that still mean a DNS server answered (the name or the type just is not there). */
const ANSWERED = new Set(["ENOTFOUND", "ENODATA"]);

const REASONS: Record<string, string> = {
  ENOTFOUND: "no such name (NXDOMAIN)",
  ENODATA: "no record of that type",
  ETIMEOUT: "timeout",
  ECANCELLED: "timeout",
  ECONNREFUSED: "connection refused",
  ESERVFAIL: "server failure (SERVFAIL)",
  EREFUSED: "query refused (REFUSED)",
  EBADRESP: "malformed answer",
  EFORMERR: "format error (FORMERR)",
};

function count(records: unknown): number {
  if (Array.isArray(records)) return records.length;
  return records ? 1 : 0; // SOA answers one object
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * Runs one DNS check with node:dns (c-ares) and never throws. Queries `name` for
 * `record_type` at resolver_ip:resolver_port (the system resolvers when resolver_ip is null);
 * `timeout_ms` bounds the whole check. When the answer holds no record of the type, the
 * name's CNAME is followed, at most `max_depth` times (a resolver that answers the whole
 * chain at once needs none). A PTR check of an IP address queries its reverse name.
 *
 * Metrics: `dns_up` (1 when at least one record answered), `dns_answers` (how many; 0 when
 * down), `dns_response_ms` (until the last answer, also for NXDOMAIN and NODATA; absent when
 * no server answered).
 */
export async function runDnsCheck(spec: DnsCheckSpec): Promise<DnsProbeResult> {
  const type = spec.record_type.toUpperCase();
  const down = (reason: string, ms: number | null): DnsProbeResult => ({
    metrics: [{ metric: "dns_up", value: 0 }, { metric: "dns_answers", value: 0 }, ...(ms === null ? [] : [{ metric: "dns_response_ms", value: round(ms) }])],
    reason,
    answered_name: null,
  });
  if (!RECORD_TYPES.has(type)) return down(`unsupported record type ${spec.record_type}`, null);

  const resolver = new Resolver({ timeout: spec.timeout_ms, tries: 1 });
  if (spec.resolver_ip !== null) {
    const family = ipFamily(spec.resolver_ip);
    if (!family) return down("resolver_ip is not an IP address", null);
    try {
      resolver.setServers([family === 6 ? `[${spec.resolver_ip}]:${spec.resolver_port}` : `${spec.resolver_ip}:${spec.resolver_port}`]);
    } catch {
      return down("resolver address refused", null);
    }
  }

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    resolver.cancel();
  }, spec.timeout_ms);
  const started = performance.now();
  let name = spec.name.replace(/\.$/, "");
  let depth = 0;
  try {
    for (;;) {
      let answers = 0;
      try {
        answers = count(type === "PTR" && isIpAddress(name) ? await resolver.reverse(name) : await resolver.resolve(name, type));
      } catch (err) {
        const code = (err as { code?: string }).code ?? "";
        if (timedOut) return down(REASONS.ETIMEOUT, null);
        if (code !== "ENODATA") return down(REASONS[code] ?? `query failed (${code || "error"})`, ANSWERED.has(code) ? performance.now() - started : null);
      }
      if (answers > 0) {
        return {
          metrics: [
            { metric: "dns_up", value: 1 },
            { metric: "dns_answers", value: answers },
            { metric: "dns_response_ms", value: round(performance.now() - started) },
          ],
          reason: null,
          answered_name: name,
        };
      }
      // No record of the type (NODATA, or an answer that stops at a CNAME): follow the name's CNAME if the depth allows.
      if (type === "CNAME") return down(REASONS.ENODATA, performance.now() - started);
      let targets: string[] = [];
      try {
        targets = await resolver.resolveCname(name);
      } catch (err) {
        const code = (err as { code?: string }).code ?? "";
        if (timedOut) return down(REASONS.ETIMEOUT, null);
        if (!ANSWERED.has(code)) return down(REASONS[code] ?? `query failed (${code || "error"})`, null);
      }
      if (!targets.length) return down(REASONS.ENODATA, performance.now() - started);
      if (depth >= spec.max_depth) return down(`CNAME chain longer than max_depth ${spec.max_depth}`, performance.now() - started);
      depth++;
      name = targets[0].replace(/\.$/, "");
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The DNS check as the poll loop calls it (`probes.dns.run(spec)`): the metrics; why it was down goes to `onDown`. */
export class DnsProbe {
  constructor(private readonly onDown?: (reason: string, name: string, recordType: string) => void) {}

  async run(spec: DnsCheckSpec): Promise<CheckMetric[]> {
    const r = await runDnsCheck(spec);
    if (r.reason !== null) this.onDown?.(r.reason, spec.name, spec.record_type);
    return r.metrics;
  }
}
