import {
  AdditionalProperties,
  CollectionOf,
  Default,
  Description,
  Format,
  Integer,
  MaxItems,
  MaxLength,
  Maximum,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Required,
} from "@tsed/schema";

const POOL_DOC = "Pool name: 1 to 63 letters, digits, _ or - (else 400 invalid_pool); null = inherit from the folder, else the default pool";
const TAGS_DOC = "At most 64 distinct tags of 1 to 64 characters (trimmed)";

/** The query of GET /nodes: filters, and the keyset cursor. */
export class NodeListQuery {
  @Format("uuid") @Description("That folder and everything beneath it (404 when not visible)") group_id?: string;
  @Description("Effective pool equals") pool?: string;
  @Format("uuid") profile_id?: string;
  @MaxLength(255) @Description("Case-insensitive substring of the name") q?: string;
  @MaxLength(64) @Description("Exact IP address") address?: string;
  @MaxLength(2048) cursor?: string;
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 100;
}

/**
 * The node body of POST /nodes and of the full-document PUT /nodes/{id}: the spec's
 * create body plus group_id, snmp_port and the stored record's fields. An absent
 * optional field takes its default (on PUT too). The facts a poller learns
 * (sys_object_id, sys_descr, sys_name) are not accepted here.
 */
@AdditionalProperties(false)
@Description("Body of POST /nodes and of the full-document PUT /nodes/{id}.")
export class NodeWrite {
  @Required()
  @MinLength(1)
  @MaxLength(255)
  @Description("Display name; must hold a non-blank character (stored trimmed)")
  name: string;

  @Required()
  @MinLength(1)
  @MaxLength(64)
  @Description("An IPv4 or IPv6 address, without prefix length or zone")
  address: string;

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description("A stored credential (else 400 unknown_reference)")
  credential_id?: string | null;

  @Description("Device model; null = unknown")
  @Optional()
  @Nullable(String)
  @MaxLength(200)
  model?: string | null;

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description("A node the caller can see, never the node itself or one beneath it (else 400)")
  parent_id?: string | null;

  @Optional()
  @Nullable(String)
  @Description(POOL_DOC)
  pool?: string | null;

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description("A stored profile (else 400 unknown_reference)")
  profile_id?: string | null;

  @Description("Device vendor; null = unknown")
  @Optional()
  @Nullable(String)
  @MaxLength(200)
  vendor?: string | null;

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description(
    "Folder the node is filed in; absent or null = tree root (403 out_of_scope for a folder-scoped caller); a folder the caller cannot see is 400 unknown_reference",
  )
  group_id?: string | null;

  @Optional()
  @Integer()
  @Minimum(1)
  @Maximum(65535)
  @Default(161)
  @Description("UDP port of the node's SNMP agent")
  snmp_port?: number;

  @Description("Free text of the operators, at most 4000 characters")
  @Optional()
  @Nullable(String)
  @MaxLength(4000)
  notes?: string | null;

  @Optional()
  @CollectionOf(String)
  @MaxItems(64)
  @Description(`Labels of the node; ${TAGS_DOC}`)
  tags?: string[];

  @Optional()
  @CollectionOf(String)
  @MaxItems(64)
  @Description(`Labels refused from the folders above; ${TAGS_DOC}`)
  tags_excluded?: string[];

  @Optional()
  @Default(false)
  @Description("A person fixed the profile: reclassification leaves it alone")
  profile_locked?: boolean;

  @Optional()
  @Default(0)
  @Description("Position among siblings (double)")
  sort_order?: number;
}

/** One node as stored, with its effective pool and tags from inventory.node_directory. */
@Description("A node as the inventory answers it, with its effective pool and tags (GET /nodes, GET /nodes/{id}).")
export class NodeView {
  @Required() @Format("uuid") id: string;
  @Required() name: string;
  @Required() @Description("IP address text") address: string;
  @Required() @Description('"device" for a node that stands at an address') node_kind: string;
  @Description("Credential used to poll the node; null = none") @Required() @Nullable(String) @Format("uuid") credential_id: string | null;
  @Required() @Nullable(String) @Format("uuid") @Description("Folder; null = tree root") group_id: string | null;
  @Description("Parent node; null = none") @Required() @Nullable(String) @Format("uuid") parent_id: string | null;
  @Required() @Nullable(String) @Description("The node's own pool") pool: string | null;
  @Required() @Description('Its own pool, else the nearest folder\'s, else "default"') effective_pool: string;
  @Description("Device profile; null = none") @Required() @Nullable(String) @Format("uuid") profile_id: string | null;
  @Description("Device vendor; null = unknown") @Required() @Nullable(String) vendor: string | null;
  @Description("Device model; null = unknown") @Required() @Nullable(String) model: string | null;
  @Description("UDP port of the node's SNMP agent") @Required() @Integer() snmp_port: number;
  @Description("Free text of the operators") @Required() @Nullable(String) notes: string | null;
  @Description("Labels of the node itself") @Required() @CollectionOf(String) tags: string[];
  @Description("Labels refused from the folders above") @Required() @CollectionOf(String) tags_excluded: string[];
  @Required()
  @CollectionOf(String)
  @Description("Tags inherited from the folders above plus its own, minus each level's tags_excluded")
  effective_tags: string[];
  @Description("A person fixed the profile: reclassification leaves it alone") @Required() profile_locked: boolean;
  @Description("Position among siblings (double)") @Required() sort_order: number;
  @Required() @Nullable(String) @Description("Learnt by polling; read-only here") sys_object_id: string | null;
  @Required() @Nullable(String) @Description("Learnt by polling; read-only here") sys_descr: string | null;
  @Required() @Nullable(String) @Description("Learnt by polling; read-only here") sys_name: string | null;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

/** Filters of GET /nodes, already validated. */
export interface NodeListFilter {
  /** Folder and everything beneath it. */
  groupId: string | null;
  effectivePool: string | null;
  profileId: string | null;
  /** Case-insensitive name substring. */
  q: string | null;
  address: string | null;
}
