import { Inject, Injectable } from "@tsed/di";
import { CredentialService } from "../../inventory/contract.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import { bindReceivers } from "../lib/receivers.js";
import type { BoundListener, Inbound } from "../lib/types.js";
import type { TrapUser } from "../traps/receiver.js";

/** The core's receivers (lib/receivers.ts), each bound one reported to the kernel (GET /listeners and the ready line). */
@Injectable()
export class ListenerService {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  private bound: BoundListener[] = [];

  listeners(): readonly BoundListener[] {
    return this.bound;
  }

  async start(deliver: (m: Inbound) => boolean): Promise<void> {
    this.bound = await bindReceivers(this.ctx.config, deliver, {
      dataDir: this.ctx.kernelConfig.dataDir,
      trapUsers: () => this.trapUsers(this.ctx.config.traps.v3Credentials),
      log: this.ctx.log,
      onBound: (name, l) => this.ctx.reportListener(name, { bound: true, port: l.port, address: l.address, counters: l.counters }),
    });
  }

  async stop(): Promise<void> {
    const bound = this.bound;
    this.bound = [];
    await Promise.all(bound.map((l) => l.close().catch(() => undefined)));
    for (const l of bound) this.ctx.reportListener(l.name, { bound: false, port: null });
  }

  /** USM users of the configured snmp_v3 credentials (a missing or non-v3 credential is logged and skipped). */
  private async trapUsers(ids: readonly string[]): Promise<TrapUser[]> {
    if (!ids.length || this.ctx.mode !== "full") return [];
    const credentials = this.ctx.get(CredentialService);
    const users: TrapUser[] = [];
    for (const id of ids) {
      const c = await credentials.reveal(id);
      const user = (c?.settings as Partial<Record<string, string>> | undefined)?.user;
      if (!c || c.kind !== "snmp_v3" || !user) {
        this.ctx.log.warn("events: v3 trap credential skipped (not an snmp_v3 credential)", { credential_id: id });
        continue;
      }
      users.push({
        name: user,
        level: (c.settings.security_level ?? "noAuthNoPriv") as TrapUser["level"],
        authProtocol: c.settings.auth_protocol?.toLowerCase() as TrapUser["authProtocol"],
        authKey: c.secrets.auth_key,
        privProtocol: c.settings.priv_protocol?.toLowerCase() as TrapUser["privProtocol"],
        privKey: c.secrets.priv_key,
      });
    }
    return users;
  }
}
