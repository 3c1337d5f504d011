import { Controller, Inject } from "@tsed/di";
import type { PlatformContext } from "@tsed/platform-http";
import { Context, PathParams } from "@tsed/platform-params";
import { Description, Format, Get, Post, Returns, Summary } from "@tsed/schema";
import { FastJson, Body, CallerScope, ErrorEnvelope, Permission, Query, ReturnsPage, ScopeUnsupported, sendPage, type Scope } from "../../../core/index.js";
import { AgentHealthQuery, AgentHealthView, InterfaceSearchHit, InterfaceSearchQuery, SnmpProbeBody, SnmpProbeResult } from "../models/ConsoleModels.js";
import { ConsoleService } from "../services/ConsoleService.js";

/** The operator console's polling routes: test an agent before adding it, agent health per node, interface search. */
@Controller("/")
export class ConsoleController {
  @Inject(ConsoleService)
  private console: ConsoleService;

  @Post("/snmp/probe")
  @Permission("ManageConfig")
  @ScopeUnsupported()
  @Summary("Ask an SNMP agent for sysName, sysDescr and sysObjectID with a stored credential (a test before adding a device)")
  @Description(
    "One GET without retry, waiting at most `timeout_ms` (default 2000, at most 5000), sent from the core. Answers 200 whether or not the agent " +
      "answered: `outcome` says ok, timeout (also a v1/v2c community the agent does not serve: such agents stay silent), auth (v3 credentials " +
      "refused) or error, with the profile the classification rules would give the device. The credential's secret is never in the answer. " +
      "Credentials need scope All, so folder-scoped callers get 403 scope_unsupported.",
  )
  @Returns(200, SnmpProbeResult)
  @(Returns(400, ErrorEnvelope).Description(
    "validation_failed (address, port, timeout_ms), unknown_reference (no such credential), invalid_credential (not SNMP)",
  ))
  probe(@Body() body: SnmpProbeBody): Promise<SnmpProbeResult> {
    return this.console.probe(body);
  }

  @Get("/agent-health")
  @Permission("read")
  @Summary("Each visible node's reachability, SNMP agent status, last successful poll and data age, by node id (keyset pagination)")
  @Description(
    "From the latest poll of each node. `problems=true` keeps the nodes found unreachable or whose agent did not answer. A folder-scoped " +
      "caller sees the nodes of its folders only.",
  )
  @ReturnsPage(AgentHealthView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (limit, problems), invalid_cursor"))
  async agentHealthList(@Context() ctx: PlatformContext, @CallerScope() scope: Scope, @Query() query: AgentHealthQuery): Promise<AgentHealthView[]> {
    return sendPage(ctx, await this.console.agentHealthList(scope, query.problems === "true", query.limit, query.cursor));
  }

  @Get("/nodes/:id/agent-health")
  @Permission("read")
  @Summary("A node's reachability, SNMP agent status, last successful poll and data age")
  @Description("404 for a node that is missing or outside the caller's scope.")
  @Returns(200, AgentHealthView)
  @Returns(400, ErrorEnvelope)
  @Returns(404, ErrorEnvelope)
  agentHealth(@PathParams("id") @Format("uuid") id: string, @CallerScope() scope: Scope): Promise<AgentHealthView> {
    return this.console.agentHealth(id, scope);
  }

  @Get("/interfaces")
  @Permission("read")
  @Summary("Interfaces across nodes whose name or description holds q, by node name (keyset pagination)")
  @Description(
    "Case-insensitive substring of ifName or ifAlias as last polled. `group_id` keeps that folder and everything beneath it (404 when the " +
      "caller cannot see it); a folder-scoped caller sees the interfaces of its folders' nodes only.",
  )
  @ReturnsPage(InterfaceSearchHit)
  @(Returns(400, ErrorEnvelope).Description("validation_failed (q missing or blank, limit), invalid_cursor"))
  @FastJson()
  @Returns(404, ErrorEnvelope)
  async interfaces(@Context() ctx: PlatformContext, @CallerScope() scope: Scope, @Query() query: InterfaceSearchQuery): Promise<InterfaceSearchHit[]> {
    return sendPage(ctx, await this.console.searchInterfaces(query.q, query.group_id, query.limit, query.cursor, scope));
  }
}
