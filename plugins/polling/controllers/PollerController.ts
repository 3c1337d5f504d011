import { Controller, Inject } from "@tsed/di";
import { PathParams } from "@tsed/platform-params";
import { Description, Get, Pattern, Post, Returns, Summary } from "@tsed/schema";
import { Body, ErrorEnvelope, Permission, ScopeUnsupported } from "../../../core/index.js";
import {
  PollerHeartbeatAck,
  PollerHeartbeatBody,
  PollerRegisterBody,
  PollerRegistered,
  PollerView,
  PollTargetView,
  SamplesAck,
  SamplesBody,
} from "../models/PollerModels.js";
import type { PollBatch } from "../poller/wire.js";
import { AssignmentService } from "../services/AssignmentService.js";
import { PollerRegistry } from "../services/PollerRegistry.js";
import { SampleSink } from "../services/SampleSink.js";

const POLLER_ID = /^[A-Za-z0-9_.:-]{1,100}$/;

/**
 * The remote pollers' side of the core. A poller authenticates with an API token of an admin
 * account (ManageSystem, scope All): the assignment carries the secrets of its nodes' credentials.
 */
@Controller("/pollers")
export class PollerController {
  @Inject(PollerRegistry)
  private registry: PollerRegistry;

  @Inject(AssignmentService)
  private assignments: AssignmentService;

  @Inject(SampleSink)
  private sink: SampleSink;

  @Get("/")
  @Permission("ManageSystem")
  @Summary("Pollers, by pool, with their online flag")
  @(Returns(200, Array).Of(PollerView))
  async list(): Promise<PollerView[]> {
    const rows = await this.registry.list();
    return rows.map(({ telemetry: _t, ...p }) => p);
  }

  @Post("/register")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Register a remote poller for a pool")
  @Description("Creates or refreshes the poller; one that had been silent past the allowance gets a monitoring gap recorded.")
  @Returns(200, PollerRegistered)
  @(Returns(400, ErrorEnvelope).Description("validation_failed; invalid_pool"))
  @(Returns(409, ErrorEnvelope).Description("poller_id_reserved: the id of the core's embedded poller"))
  async register(@Body() body: PollerRegisterBody): Promise<PollerRegistered> {
    const { heartbeat_secs } = await this.registry.register({
      id: body.poller_id,
      pool: body.pool,
      kind: "remote",
      version: body.version ?? null,
      listeners: body.listeners ?? [],
    });
    return { poller_id: body.poller_id, pool: body.pool, heartbeat_secs };
  }

  @Get("/:id/assignment")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("What the poller must poll: the targets of its pool, credentials' secrets included")
  @(Returns(200, Array).Of(PollTargetView))
  @(Returns(404, ErrorEnvelope).Description("No such poller (register first)"))
  async assignment(@PathParams("id") @Pattern(POLLER_ID) id: string): Promise<PollTargetView[]> {
    const poller = await this.registry.get(id);
    return this.assignments.targets(poller.pool);
  }

  @Post("/:id/heartbeat")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("A poller's heartbeat, with its host telemetry")
  @Returns(200, PollerHeartbeatAck)
  @(Returns(400, ErrorEnvelope).Description("validation_failed"))
  @(Returns(404, ErrorEnvelope).Description("No such poller (register first)"))
  heartbeat(@PathParams("id") @Pattern(POLLER_ID) id: string, @Body() body: PollerHeartbeatBody): Promise<PollerHeartbeatAck> {
    return this.registry.heartbeat(id, body.telemetry ?? null);
  }

  @Post("/:id/samples")
  @Permission("ManageSystem")
  @ScopeUnsupported()
  @Summary("Samples (and interface, facts and reachability updates) a poller measured")
  @Description(
    "Stored before the answer (a 2xx means committed); a sample already stored is skipped, so a resend is harmless. " +
      "backfill: true for what a poller buffered while cut off (stored, not alerted on).",
  )
  @Returns(200, SamplesAck)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (also more than the per-request cap of samples, interfaces, facts or reachability)"))
  @(Returns(404, ErrorEnvelope).Description("No such poller (register first)"))
  async samples(@PathParams("id") @Pattern(POLLER_ID) id: string, @Body() body: SamplesBody): Promise<SamplesAck> {
    const poller = await this.registry.get(id);
    const batch: PollBatch = {
      samples: body.samples.map((s) => ({ ...s, pool: poller.pool, poller_id: poller.id, backfill: body.backfill })),
      facts: body.facts ?? [],
      interfaces: body.interfaces ?? [],
      reachability: body.reachability ?? [],
      backfill: body.backfill,
    };
    await this.sink.accept(batch, { poller_id: poller.id, pool: poller.pool });
    return { ok: true, samples: batch.samples.length };
  }
}
