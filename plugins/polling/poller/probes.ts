import { DnsProbe } from "../checks/DnsProbe.js";
import { Liveness } from "../checks/Liveness.js";
import { UrlProbe } from "../checks/UrlProbe.js";
import { SnmpPoller } from "../snmp/SnmpPoller.js";
import type { LoopLogger, Probes } from "./PollLoop.js";
import type { PollTarget } from "./types.js";

export interface ProbeOptions {
  snmpTimeoutMs: number;
  snmpRetries: number;
  log: LoopLogger;
  /** A ready SNMP engine (the core's SnmpPollerService); else one is made from the timeouts. */
  snmp?: { poll(target: PollTarget): ReturnType<SnmpPoller["poll"]> };
}

/** The production probes: net-snmp polling, ICMP/SNMP/TCP liveness, URL and DNS checks. */
export async function defaultProbes(opts: ProbeOptions): Promise<Probes> {
  const liveness = await Liveness.create({ timeoutMs: opts.snmpTimeoutMs });
  opts.log.info("liveness method", liveness.icmp.available ? { icmp: true } : { icmp: false, why: liveness.icmp.reason, fallback: "snmp and tcp" });
  return {
    snmp: opts.snmp ?? new SnmpPoller({ timeoutMs: opts.snmpTimeoutMs, retries: opts.snmpRetries }),
    liveness,
    url: new UrlProbe((reason, url) => opts.log.debug("url check down", { url, reason })),
    dns: new DnsProbe((reason, name, type) => opts.log.debug("dns check down", { name, type, reason })),
  };
}
