/**
 * The poller runtime's part of the polling manifest: providers, jobs, the `nms poller` command and
 * the start/stop hooks (index.ts spreads these in). start() keeps sample partitions ready, forgets
 * deleted nodes' latest values, and runs the embedded poller when pluginConfig.polling.embeddedPoller.
 */
import type { JobDeclaration, PluginContext } from "../../../core/index.js";
import type { PollingContext } from "../context.js";
import { GapRepository } from "../repositories/GapRepository.js";
import { PollerRepository } from "../repositories/PollerRepository.js";
import { SampleRepository } from "../repositories/SampleRepository.js";
import { AssignmentService } from "../services/AssignmentService.js";
import { EmbeddedPoller } from "../services/EmbeddedPoller.js";
import { HostCounters } from "../services/HostCounters.js";
import { HostTelemetryService } from "../services/HostTelemetryService.js";
import { PollerRegistry } from "../services/PollerRegistry.js";
import { SampleSink } from "../services/SampleSink.js";
import { pollerCommand } from "./commands.js";

export const runtimeProviders = [
  AssignmentService,
  SampleSink,
  PollerRegistry,
  EmbeddedPoller,
  HostTelemetryService,
  HostCounters,
  PollerRepository,
  SampleRepository,
  GapRepository,
];

export const runtimeJobs: JobDeclaration[] = [
  {
    // polling.poller-watch: pollers silent past heartbeatAllowanceSecs go offline (polling.poller.offline).
    name: "poller-watch",
    every: "5 seconds",
    handler: async (_job, ctx) => {
      await ctx.get(PollerRegistry).markSilentOffline();
    },
  },
  {
    // polling.retention: day partitions of polling.samples made ahead, and those older than retentionDays dropped.
    name: "retention",
    every: "1 hour",
    handler: async (_job, ctx) => {
      await ctx.get(SampleSink).maintainPartitions();
    },
  },
];

export const runtimeCommands = { poller: pollerCommand };

const unsubscribers = new WeakMap<PluginContext, (() => void)[]>();

/** The plugin's start: partitions ahead, node deletions followed, the embedded poller when configured. */
export async function startRuntime(ctx: PollingContext): Promise<void> {
  if (ctx.mode !== "full") return;
  await ctx.get(SampleSink).maintainPartitions();
  const samples = ctx.get(SampleRepository);
  unsubscribers.set(ctx, [
    ctx.bus.on("inventory.node.deleted", (e) =>
      samples.forgetNode(e.id).catch((err: Error) => ctx.log.warn("latest values of a deleted node not removed", { node_id: e.id, error: err.message })),
    ),
  ]);
  if (ctx.config.embeddedPoller) await ctx.get(EmbeddedPoller).start();
}

export async function stopRuntime(ctx: PollingContext): Promise<void> {
  for (const off of unsubscribers.get(ctx) ?? []) off();
  unsubscribers.delete(ctx);
  if (ctx.mode !== "full") return;
  await ctx.get(EmbeddedPoller).stop();
  await ctx.get(SampleSink).flush();
}
