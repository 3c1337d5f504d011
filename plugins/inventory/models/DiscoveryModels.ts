import {
  AdditionalProperties,
  CollectionOf,
  Integer,
  Default,
  Description,
  Format,
  MaxItems,
  MaxLength,
  Maximum,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Required,
} from "@tsed/schema";

/** One device to import. */
@AdditionalProperties(false)
@Description("One device of a discovery import.")
export class DiscoveryImportNode {
  @Required()
  @MinLength(1)
  @MaxLength(255)
  @Description("Shown name; trimmed, must not be blank")
  name: string;

  @Required()
  @MinLength(1)
  @MaxLength(64)
  @Description("IPv4 or IPv6 address (no prefix length, no zone); compared as an address, so 2001:db8::1 and 2001:DB8:0::1 are the same")
  address: string;

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description("Credential reference; must exist")
  credential_id?: string | null;

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description("Device profile; must exist")
  profile_id?: string | null;

  @Description("Device model; null = unknown")
  @Optional()
  @Nullable(String)
  @MaxLength(200)
  model?: string | null;

  @Description("Device vendor; null = unknown")
  @Optional()
  @Nullable(String)
  @MaxLength(200)
  vendor?: string | null;

  @Optional()
  @Integer()
  @Minimum(1)
  @Maximum(65535)
  @Description("UDP port of the node's SNMP agent; absent = 161")
  snmp_port?: number;

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description(
    "Three states: absent = follow the request (filing by range when file_by_prefix, else the request's group_id); a uuid = that folder; null = the tree root. A row with its own group_id is never filed by range",
  )
  group_id?: string | null;
}

@AdditionalProperties(false)
@Description("Body of POST /discovery/import: the devices to create as nodes and where to file them.")
export class DiscoveryImportBody {
  @Required()
  @CollectionOf(DiscoveryImportNode)
  @MaxItems(100000)
  @Description("Devices to import; at most pluginConfig.inventory.sweepSize (default 4096), else 400 too_many_nodes")
  nodes: DiscoveryImportNode[];

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description("Folder for the whole request, and the fallback of filing by range; absent or null = the tree root")
  group_id?: string | null;

  @Optional()
  @Default(false)
  @Description(
    "File each row without its own group_id into the visible folder whose ip_ranges hold its address (the most specific range wins); group_id is the fallback when no range holds it or two folders claim it equally",
  )
  file_by_prefix?: boolean;
}

/** Counts of the created nodes filed by range. */
@Description("Counts of the created nodes filed into folders by IP range, present when filing by range was asked.")
export class DiscoveryFiled {
  @Required() @Integer() @Description("Two or more folders claimed the address with equally specific ranges: filed into the fallback") ambiguous: number;
  @Required() @Integer() @Description("Several folders' ranges held the address; the most specific range won") chosen: number;
  @Required() @Integer() @Description("Exactly one folder's ranges held the address") matched: number;
  @Required() @Integer() @Description("No visible folder's range held the address: filed into the fallback") unmatched: number;
}

@Description("What a discovery import created and skipped (POST /discovery/import).")
export class DiscoveryImportResult {
  @Required() @Integer() @Description("Nodes created") created: number;

  @Required()
  @Integer()
  @Description("Rows skipped because a device node already stands at that address, including an earlier row of the same request")
  skipped_existing: number;

  @Required()
  @Nullable(DiscoveryFiled)
  @Description("null unless file_by_prefix; counts only the created rows that were filed by range (rows with their own group_id are not)")
  filed: DiscoveryFiled | null;
}
