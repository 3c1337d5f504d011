import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  Format,
  Integer,
  Maximum,
  MaxItems,
  MaxLength,
  Minimum,
  MinItems,
  MinLength,
  Nullable,
  Optional,
  Required,
  UniqueItems,
} from "@tsed/schema";

export const SWEEP_STATUSES = ["queued", "running", "done", "failed"] as const;
export type SweepStatus = (typeof SWEEP_STATUSES)[number];

/** Most candidate credentials one sweep tries. */
export const SWEEP_MAX_CREDENTIALS = 8;
export const SWEEP_DEFAULT_PORT = 161;
export const SWEEP_DEFAULT_TIMEOUT_MS = 1000;

/** The query of GET /sweeps: a page (50 by default). */
export class SweepListQuery {
  @Integer() @Minimum(1) @Maximum(100) limit: number = 50;
  @MaxLength(2048) cursor?: string;
}

@AdditionalProperties(false)
@Description("Body of POST /discovery/sweeps: the address range to probe and how.")
export class SweepCreate {
  @Required()
  @MinLength(1)
  @MaxLength(64)
  @Description(
    "IPv4 or IPv6 range as address/prefix (a bare address is one host; host bits set name the network that holds them: 10.0.0.1/24 sweeps 10.0.0.0/24). IPv4 ranges wider than /31 skip the network and broadcast " +
      "addresses. At most pluginConfig.inventory.sweepSize addresses (default 4096, the most one discovery import takes), else 400 too_many_addresses",
  )
  cidr: string;

  @Required()
  @CollectionOf(String)
  @MinItems(1)
  @MaxItems(SWEEP_MAX_CREDENTIALS)
  @UniqueItems()
  @Description("1 to 8 inventory credential ids of kind snmp_v2c or snmp_v3, in order of preference (400 unknown_reference, invalid_credential)")
  credential_ids: string[];

  @Optional()
  @Nullable(String)
  @Description("Poller pool whose network the range is in; absent or null = default. Letters, digits, _ and -, at most 63, else 400 invalid_pool")
  pool?: string | null;

  @Optional()
  @Integer()
  @Minimum(1)
  @Maximum(65535)
  @Description("UDP port the agents listen on; default 161")
  port?: number;

  @Optional()
  @Integer()
  @Minimum(100)
  @Maximum(10000)
  @Description("How long each probe waits for an answer (no retry); default 1000")
  timeout_ms?: number;
}

@Description("A discovery sweep and its progress (GET /discovery/sweeps).")
export class SweepView {
  @Required() @Format("uuid") id: string;
  @Description("The range swept") @Required() cidr: string;
  @Description("UDP port probed") @Required() @Integer() port: number;
  @Description("Poller pool that sweeps it; null = default") @Required() @Nullable(String) pool: string | null;
  @Description("Credentials tried, in order of preference") @Required() @CollectionOf(String) credential_ids: string[];
  @Description("How long each probe waits for an answer") @Required() @Integer() timeout_ms: number;
  @Description("queued, running, done or failed") @Required() @Enum(...SWEEP_STATUSES) status: SweepStatus;
  @Required() @Integer() @Description("Addresses in the range") total: number;
  @Required() @Integer() @Description("Addresses probed so far") probed: number;
  @Required() @Integer() @Description("Addresses that answered so far") found: number;
  @Required() @Nullable(String) @Description("Why a failed sweep failed") error: string | null;
  @Required() @Nullable(String) @Description("Who started it") created_by: string | null;
  @Required() @Format("date-time") created_at: string;
  @Required() @Nullable(String) @Format("date-time") started_at: string | null;
  @Required() @Nullable(String) @Format("date-time") finished_at: string | null;
}

@Description("A device a discovery sweep found.")
export class SweepResultView {
  @Description("The address that answered") @Required() address: string;
  @Description("sysName; null when not read") @Required() @Nullable(String) sys_name: string | null;
  @Description("sysObjectID, dotted; null when not read") @Required() @Nullable(String) sys_object_id: string | null;
  @Description("sysDescr; null when not read") @Required() @Nullable(String) sys_descr: string | null;
  @Required() @Format("uuid") @Description("The first credential, in the sweep's order, that the device answered") credential_id: string;
  @Required() @Nullable(String) @Format("uuid") @Description("The classifier's profile for its sysObjectID / sysDescr") proposed_profile_id: string | null;
  @Description("Pre-fill from the classification rule that matched; null = none") @Required() @Nullable(String) vendor: string | null;
  @Description("Pre-fill from the classification rule that matched; null = none") @Required() @Nullable(String) model: string | null;
  @Required() @Format("date-time") found_at: string;
}

/** A row of the discovery import body (POST /discovery/import). */
@Description("A row of the discovery import body (POST /discovery/import) prefilled from a sweep result.")
export class SweepImportNode {
  @Required() @Description("sysName, else the address") name: string;
  @Required() address: string;
  @Description("The credential the device answered") @Required() @Nullable(String) @Format("uuid") credential_id: string | null;
  @Description("The proposed profile; null = none") @Required() @Nullable(String) @Format("uuid") profile_id: string | null;
  @Description("Pre-fill from the classification rule; null = none") @Required() @Nullable(String) vendor: string | null;
  @Description("Pre-fill from the classification rule; null = none") @Required() @Nullable(String) model: string | null;
  @Optional()
  @Integer()
  @Description("The UDP port the sweep reached the agent on; present only when it is not the default 161")
  snmp_port?: number;
}

@Description("The discovery import body prefilled from a sweep's results.")
export class SweepImportBody {
  @Required() @CollectionOf(SweepImportNode) nodes: SweepImportNode[];
}

@Description("A discovery sweep with the devices it found and a ready import body (GET /discovery/sweeps/{id}).")
export class SweepDetail extends SweepView {
  @Required() @CollectionOf(SweepResultView) @Description("Devices that answered, by address") results: SweepResultView[];

  @Required()
  @Description("The results as a POST /api/v1/discovery/import body (add group_id or file_by_prefix as needed)")
  import_body: SweepImportBody;
}
