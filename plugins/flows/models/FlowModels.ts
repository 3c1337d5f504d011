import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Integer,
  MaxItems,
  MaxLength,
  Maximum,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Pattern,
  Required,
} from "@tsed/schema";
import { POOL_NAME_PATTERN } from "../../../core/index.js";

/** The spec's flow conversation row. */
export class FlowConversation {
  @Required() src: string;
  @Required() dst: string;
  @Required() @Integer() @Description("0 = unknown") src_asn: number;
  @Required() @Integer() @Description("0 = unknown") dst_asn: number;
  @Required() @Nullable(String) src_as_name: string | null;
  @Required() @Nullable(String) @Description("names resolved from the address-to-AS table") dst_as_name: string | null;
  @Required() @Integer() bytes: number;
  @Required() @Integer() packets: number;
  @Required() @Integer() @Description("distinct flows") flows: number;
}

export class TopAs {
  @Required() @Integer() @Description("0 = unknown") asn: number;
  @Required() @Nullable(String) name: string | null;
  @Required() @Integer() bytes: number;
  @Required() @Integer() packets: number;
  @Required() @Integer() flows: number;
}

export class FlowExporter {
  @Required() address: string;
  @Required() @Nullable(String) @Description("the node at this address (folder scope follows it)") node_id: string | null;
  @Required() @Nullable(String) node_name: string | null;
  @Required() @Description("5, 9 or 10 (IPFIX), as last seen") version: number;
  @Required() first_seen: string;
  @Required() last_seen: string;
  @Required() @Integer() records: number;
  @Required() @Integer() bytes: number;
  @Required() @Integer() packets: number;
  @Required() @Integer() @Description("sampling rate applied (1 = unsampled)") sampling: number;
  @Required() @Description("none, exporter (header or option records) or override (configuration)") sampling_source: string;
  @Required() @Integer() @Description("templates stored for it (v9, IPFIX)") templates: number;
  @Required() @Description("flow records per second over the last 5 minutes") records_per_sec: number;
}

export class AsnEntry {
  @Required() @MinLength(3) @MaxLength(49) @Description("IPv4 or IPv6 prefix, e.g. 192.0.2.0/24") prefix: string;
  @Required() @Integer() @Minimum(0) @Maximum(4294967295) asn: number;
  @Optional() @Nullable(String) @MaxLength(200) name?: string | null;
}

@AdditionalProperties(false)
export class AsnImport {
  @Required() @CollectionOf(AsnEntry) @MaxItems(100000) entries: AsnEntry[];
  @Optional() @Description("true (default): the table is replaced; false: entries are added or updated") replace?: boolean;
}

export class AsnImportResult {
  @Required() @Integer() prefixes: number;
  @Required() @Integer() names: number;
}

export class ForwardedDatagram {
  @Required() @MinLength(3) @MaxLength(45) @Description("the exporter's address as the poller saw it") exporter: string;
  @Required() @MinLength(4) @MaxLength(87400) @Description("the datagram, base64") data: string;
}

@AdditionalProperties(false)
export class ForwardedDatagrams {
  @Required() @MinLength(1) @MaxLength(100) poller_id: string;
  @Optional()
  @Pattern(POOL_NAME_PATTERN)
  @Description("the poller's pool: an exporter is attributed to a node of that pool first (two sites may reuse an address)")
  pool?: string;
  @Required() @CollectionOf(ForwardedDatagram) @MaxItems(500) datagrams: ForwardedDatagram[];
}

export class FlowForwardedResult {
  @Required() @Integer() accepted: number;
  @Required() @Integer() @Description("not an address, or not base64") dropped: number;
}

export class AsnMmdbImportResult {
  @Required() @Integer() @Description("prefixes written (networks with an AS number)") prefixes: number;
  @Required() @Integer() @Description("AS names written") names: number;
  @Required()
  @Integer()
  @Description("networks in the file (records of its search tree that hold data; the IPv4 aliases of an IPv6 tree not counted)")
  networks: number;
  @Required() @Integer() @Description("networks skipped: no AS number field, an empty one, or AS 0") skipped: number;
  @Required() @Description("the file's database_type (GeoLite2-ASN, …)") database_type: string;
  @Required() @Integer() @Description("4 or 6: the file's search tree") ip_version: number;
}
