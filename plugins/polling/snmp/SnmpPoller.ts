/**
 * One SNMP poll of one node: system group, IF-MIB, HOST-RESOURCES and the node's collection
 * template items, in as few exchanges as the agent allows (the system group rides as
 * non-repeaters on the first GetBulk of the table walk). A plain class, so a remote poller
 * process uses it without dependency injection; SnmpPollerService wraps it for the core.
 *
 * poll() never throws: an agent that does not answer (or refuses the credential) gives
 * {answered: false} after timeoutMs × (retries + 1) at most.
 */
import type snmp from "net-snmp";
import type { PollTarget, SnmpPollResult } from "../poller/types.js";
import { readHostResources, HR_COLUMNS } from "./collectors/hostResources.js";
import { IF_COLUMNS, readInterfaces } from "./collectors/interfaces.js";
import { readSystem, SYSTEM_NEXT } from "./collectors/system.js";
import { readTemplates, templatePlan, type TemplateCounterReading } from "./collectors/templates.js";
import { openSession, SnmpError, type SnmpSession } from "./session.js";

export interface SnmpPollerOptions {
  /** Milliseconds to wait for one answer (pluginConfig.polling.snmpTimeoutMs). */
  timeoutMs: number;
  /** Re-sends after the first attempt (pluginConfig.polling.snmpRetries). */
  retries: number;
  /** GetBulk max-repetitions upper bound (default 25). */
  maxRepetitions?: number;
  /** Var-binds asked for per GetBulk request (default 64, snmpsim's own cap). */
  maxVarbinds?: number;
  /** Rows read per column at most (default 10000). */
  maxRowsPerColumn?: number;
  /** Walk HOST-RESOURCES (default true). */
  hostResources?: boolean;
}

/** The poll result plus what the seam types do not carry yet (see the report to the lead). */
export interface SnmpPollOutcome extends SnmpPollResult {
  /** Why the agent did not answer, or why the poll is partial (a later exchange failed); null when all went well. */
  error: string | null;
  /** timeout | auth | unsupported | error, with `error`. */
  failure: SnmpError["failure"] | null;
  /** Every template counter (scalar and table), raw and with its width, for counterRate(). */
  template_counters: TemplateCounterReading[];
  /** Requests sent (GetBulk/GetNext/Get), for measurements. */
  requests: number;
}

const DEFAULTS = { maxRepetitions: 25, maxVarbinds: 64, maxRowsPerColumn: 10000, hostResources: true };

export class SnmpPoller {
  private readonly opts: Required<SnmpPollerOptions>;

  constructor(options: SnmpPollerOptions) {
    this.opts = { ...DEFAULTS, ...options };
  }

  /** The worst case for a silent agent: every attempt of the first exchange timing out. */
  get silentAgentMs(): number {
    return this.opts.timeoutMs * (this.opts.retries + 1);
  }

  async poll(target: PollTarget): Promise<SnmpPollOutcome> {
    if (!target.snmp) return notAnswered("no SNMP credential", "unsupported", 0);
    let session: SnmpSession;
    try {
      session = openSession(target.address, target.snmp_port, target.snmp, { timeoutMs: this.opts.timeoutMs, retries: this.opts.retries });
    } catch (err) {
      const e = err instanceof SnmpError ? err : new SnmpError("error", String(err));
      return notAnswered(e.message, e.failure, 0);
    }
    try {
      return await this.pollWith(session, target);
    } catch (err) {
      const e = err instanceof SnmpError ? err : new SnmpError("error", err instanceof Error ? err.message : String(err));
      return notAnswered(e.message, e.failure, 1);
    } finally {
      session.close();
    }
  }

  private async pollWith(session: SnmpSession, target: PollTarget): Promise<SnmpPollOutcome> {
    const items = target.templates ?? [];
    const plan = templatePlan(items);
    const columns = [...new Set([...IF_COLUMNS, ...(this.opts.hostResources ? HR_COLUMNS : []), ...plan.columns])];

    // Throws when the first exchange fails: the agent did not answer.
    const walk = await session.walk(columns, SYSTEM_NEXT, this.opts);
    let error = walk.error;
    let requests = walk.requests;

    const scalarValues = new Map<string, snmp.Varbind | null>();
    if (!error && plan.scalars.length > 0) {
      try {
        for (let i = 0; i < plan.scalars.length; i += this.opts.maxVarbinds) {
          const chunk = plan.scalars.slice(i, i + this.opts.maxVarbinds);
          requests++;
          const got = await session.get(chunk);
          chunk.forEach((oid, j) => scalarValues.set(oid, got[j]));
        }
      } catch (err) {
        error = err instanceof SnmpError ? err : new SnmpError("error", String(err));
      }
    }

    const templates = readTemplates(items, scalarValues, walk.columns);
    return {
      answered: true,
      facts: readSystem(walk.first),
      interfaces: readInterfaces(walk.columns),
      rows: [...(this.opts.hostResources ? readHostResources(walk.columns) : []), ...templates.rows],
      scalars: templates.scalars,
      at_unix_ms: walk.answeredAt,
      error: error ? `partial poll: ${error.message}` : null,
      failure: error?.failure ?? null,
      template_counters: templates.counters,
      requests,
    };
  }
}

function notAnswered(reason: string, failure: SnmpError["failure"], requests: number): SnmpPollOutcome {
  return {
    answered: false,
    facts: null,
    interfaces: [],
    rows: [],
    scalars: [],
    at_unix_ms: Date.now(),
    error: reason,
    failure,
    template_counters: [],
    requests,
  };
}
