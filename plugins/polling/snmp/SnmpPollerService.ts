import { Inject, Injectable } from "@tsed/di";
import type { PollTarget } from "../poller/types.js";
import { SnmpPoller, type SnmpPollOutcome } from "./SnmpPoller.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

/** The in-process SNMP poller, configured from pluginConfig.polling (snmpTimeoutMs, snmpRetries). */
@Injectable()
export class SnmpPollerService {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  private poller: SnmpPoller | null = null;

  get engine(): SnmpPoller {
    this.poller ??= new SnmpPoller({ timeoutMs: this.ctx.config.snmpTimeoutMs, retries: this.ctx.config.snmpRetries });
    return this.poller;
  }

  poll(target: PollTarget): Promise<SnmpPollOutcome> {
    return this.engine.poll(target);
  }
}
