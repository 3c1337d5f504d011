import { definePlugin, sqlMigrationsFrom, type PluginContext } from "../../core/index.js";
import { forwardingBundleTables } from "./bundle.js";
import { forwardingConfigSchema, type ForwardingConfig } from "./context.js";
import { DestinationController } from "./controllers/DestinationController.js";
import { PollerSyncController } from "./controllers/PollerSyncController.js";
import { forwardingPassiveReceiver } from "./poller/passive.js";
import { DestinationRepository } from "./repositories/DestinationRepository.js";
import { DestinationService } from "./services/DestinationService.js";
import { ForwardingTee } from "./services/ForwardingTee.js";
import { PoolStatus } from "./services/PoolStatus.js";
import { RELAY_LISTENER, UdpRelay } from "./services/UdpRelay.js";

export type { ForwardingConfig } from "./context.js";
export type { DestKind, SourceKind, FilterField, FilterOp } from "./lib/types.js";

async function start(ctx: PluginContext<ForwardingConfig>): Promise<void> {
  if (ctx.mode !== "full") return;
  await ctx.get(UdpRelay).start();
  await ctx.get(ForwardingTee).start(ctx.get(DestinationService));
}

async function stop(ctx: PluginContext<ForwardingConfig>): Promise<void> {
  if (ctx.mode !== "full") return;
  await ctx.get(ForwardingTee).stop();
  await ctx.get(UdpRelay).stop();
}

export const forwardingPlugin = definePlugin({
  id: "forwarding",
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Tees received syslog, traps and flows to other collectors (syslog over UDP, TCP and TLS, SNMP traps, NetFlow, a data warehouse), with filters and rate limits; on the core and on a pool's pollers",
  // It consumes the events and flows plugins' received streams, and tees on remote pollers through polling's passive receivers.
  dependsOn: { events: "^0.1.0", flows: "^0.1.0", polling: "^0.1.0" },
  controllers: [DestinationController, PollerSyncController],
  providers: [DestinationRepository, DestinationService, ForwardingTee, PoolStatus, UdpRelay],
  listeners: [
    {
      name: RELAY_LISTENER,
      stream: "syslog",
      protocol: "udp",
      portKey: "relay.udp",
      description: "relay port: datagrams passed on to the fast-path destinations, not stored",
    },
  ],
  contributes: { "polling.passive": [forwardingPassiveReceiver] },
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  bundle: { tables: forwardingBundleTables },
  config: forwardingConfigSchema,
  start,
  stop,
});
