// Models of the operator console's polling routes: a one-off SNMP probe, agent health per node, interface search.
import { AdditionalProperties, Description, Enum, Format, Integer, Maximum, MaxLength, Minimum, MinLength, Nullable, Optional, Required } from "@tsed/schema";

export const PROBE_OUTCOMES = ["ok", "timeout", "auth", "error"] as const;
export type ProbeOutcome = (typeof PROBE_OUTCOMES)[number];
export const PROBE_DEFAULT_TIMEOUT_MS = 2000;
export const PROBE_MAX_TIMEOUT_MS = 5000;

@AdditionalProperties(false)
@Description("Body of POST /snmp/probe: which agent to ask, and with which stored credential.")
export class SnmpProbeBody {
  @Required()
  @MinLength(1)
  @MaxLength(64)
  @Description("IPv4 or IPv6 address of the agent (any address a node may have, loopback included), else 400 validation_failed")
  address: string;

  @Optional()
  @Integer()
  @Minimum(1)
  @Maximum(65535)
  @Description("UDP port of the agent; default 161")
  port?: number;

  @Required()
  @Format("uuid")
  @Description("A stored credential of kind snmp_v2c or snmp_v3 (400 unknown_reference, invalid_credential)")
  credential_id: string;

  @Optional()
  @Integer()
  @Minimum(100)
  @Maximum(PROBE_MAX_TIMEOUT_MS)
  @Description(`How long the probe waits for the answer (one retry-less GET); default ${PROBE_DEFAULT_TIMEOUT_MS}`)
  timeout_ms?: number;
}

@Description("What an SNMP agent answered to one GET of sysName, sysDescr and sysObjectID, and the profile the classifier would give it. Never holds a secret.")
export class SnmpProbeResult {
  @Required() @Description("True when the agent answered") answered: boolean;
  @Required()
  @Enum(...PROBE_OUTCOMES)
  @Description("ok (answered), timeout (no answer: a silent agent, or a v1/v2c community the agent does not serve), auth (v3 credentials refused), error")
  outcome: ProbeOutcome;
  @Required() @Nullable(String) @Description("sysName.0 as answered; null when not answered") sys_name: string | null;
  @Required() @Nullable(String) @Description("sysDescr.0 as answered; null when not answered") sys_descr: string | null;
  @Required() @Nullable(String) @Description("sysObjectID.0 (dotted, no leading dot); null when not answered") sys_object_id: string | null;
  @Required() @Nullable(String) @Format("uuid") @Description("The profile the classification rules give this device; null = none") profile_id: string | null;
  @Required() @Nullable(String) @Description("That profile's name") profile_name: string | null;
  @Required() @Nullable(String) @Description("Vendor the matching rule names") vendor: string | null;
  @Required() @Nullable(String) @Description("Model the matching rule names") model: string | null;
  @Required() @Integer() @Description("Time the probe took, in milliseconds") elapsed_ms: number;
}

export const AGENT_STATUSES = ["answering", "timeout", "auth", "error"] as const;
export type AgentStatusName = (typeof AGENT_STATUSES)[number];

@Description("A node's health as its latest polls saw it (GET /agent-health, GET /nodes/{id}/agent-health).")
export class AgentHealthView {
  @Required() @Format("uuid") @Description("The node") node_id: string;
  @Required() @Description("The node's name") node_name: string;
  @Required() @Nullable(Boolean) @Description("Reachability in the latest poll (ICMP, TCP or an SNMP answer); null = never polled") reachable: boolean | null;
  @Required() @Nullable(String) @Format("date-time") @Description("When reachability was last measured") reachable_at: string | null;
  @Required() @Nullable(Number) @Description("Round-trip time of the latest liveness check, ms; null when none") rtt_ms: number | null;
  @Required()
  @Nullable(String)
  @Enum(...AGENT_STATUSES, null)
  @Description(
    "The SNMP agent in the latest poll: answering, timeout, auth (credentials refused) or error; null = not polled by SNMP (no credential) or never polled",
  )
  agent_status: AgentStatusName | null;
  @Required() @Nullable(String) @Format("date-time") @Description("When agent_status was measured") agent_status_at: string | null;
  @Required()
  @Nullable(String)
  @Format("date-time")
  @Description("The last successful poll: when the SNMP agent last answered; null when it never did (or the node is not polled by SNMP)")
  last_answer_at: string | null;
  @Required()
  @Nullable(Number)
  @Integer()
  @Description("Age of the newest data, in seconds: since the last SNMP answer for SNMP nodes, else since the last liveness check; null = no data")
  data_age_secs: number | null;
}

export class AgentHealthQuery {
  @Optional()
  @Enum("true", "false")
  @Description("true: only nodes whose latest poll found them unreachable or their agent not answering")
  problems?: "true" | "false";
  @Optional() @Integer() @Minimum(1) @Maximum(1000) @Description("Page size, default 500") limit: number = 500;
  @Optional() @MaxLength(2048) @Description("X-Next-Cursor of the previous page") cursor?: string;
}

export class InterfaceSearchQuery {
  @Required() @MinLength(1) @MaxLength(255) @Description("Case-insensitive substring of the interface name (ifName) or description (ifAlias)") q: string;
  @Optional() @Format("uuid") @Description("Only that folder and everything beneath it") group_id?: string;
  @Optional() @Integer() @Minimum(1) @Maximum(200) @Description("Page size, default 50") limit: number = 50;
  @Optional() @MaxLength(2048) @Description("X-Next-Cursor of the previous page") cursor?: string;
}

@Description("An interface that matched GET /interfaces?q=, with its node.")
export class InterfaceSearchHit {
  @Required() @Format("uuid") @Description("The interface's node") node_id: string;
  @Required() @Description("The node's name") node_name: string;
  @Required() @Description("The node's address") node_address: string;
  @Required() @Integer() @Description("ifIndex") ifindex: number;
  @Required() @Nullable(String) @Description("ifName (else ifDescr) as last polled") if_name: string | null;
  @Required() @Nullable(String) @Description("ifAlias (the description an operator set)") if_alias: string | null;
  @Required() @Nullable(Boolean) @Description("Operational status in the last poll; null = unknown") oper_up: boolean | null;
}
