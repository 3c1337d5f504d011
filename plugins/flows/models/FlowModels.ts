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
@Description("A flow conversation row: traffic between two addresses (GET /flow/conversations).")
export class FlowConversation {
  @Description("Source address") @Required() src: string;
  @Description("Destination address") @Required() dst: string;
  @Required() @Integer() @Description("0 = unknown") src_asn: number;
  @Required() @Integer() @Description("0 = unknown") dst_asn: number;
  @Description("Name from the address-to-AS table, or null") @Required() @Nullable(String) src_as_name: string | null;
  @Required() @Nullable(String) @Description("names resolved from the address-to-AS table") dst_as_name: string | null;
  @Description("Bytes in the range, sampling-corrected") @Required() @Integer() bytes: number;
  @Description("Packets in the range, sampling-corrected") @Required() @Integer() packets: number;
  @Required() @Integer() @Description("distinct flows") flows: number;
}

@Description("An autonomous system ranked by flow traffic (GET /flow/top-as).")
export class TopAs {
  @Required() @Integer() @Description("0 = unknown") asn: number;
  @Description("Name from the AS table, or null") @Required() @Nullable(String) name: string | null;
  @Description("Bytes in the range, sampling-corrected") @Required() @Integer() bytes: number;
  @Description("Packets in the range, sampling-corrected") @Required() @Integer() packets: number;
  @Description("Flow records in the range") @Required() @Integer() flows: number;
}

@Description("A device that exports flow records to this service, with its counters (GET /flow/exporters).")
export class FlowExporter {
  @Description("The exporter's address") @Required() address: string;
  @Required() @Nullable(String) @Description("the node at this address (folder scope follows it)") node_id: string | null;
  @Description("Name of that node, or null") @Required() @Nullable(String) node_name: string | null;
  @Required() @Description("5, 9 or 10 (IPFIX), as last seen") version: number;
  @Description("When its first datagram arrived (RFC 3339)") @Required() first_seen: string;
  @Description("When its latest datagram arrived (RFC 3339)") @Required() last_seen: string;
  @Description("Flow records since first seen") @Required() @Integer() records: number;
  @Description("Bytes of its records since first seen") @Required() @Integer() bytes: number;
  @Description("Packets of its records since first seen") @Required() @Integer() packets: number;
  @Required() @Integer() @Description("sampling rate applied (1 = unsampled)") sampling: number;
  @Required() @Description("none, exporter (header or option records) or override (configuration)") sampling_source: string;
  @Required() @Integer() @Description("templates stored for it (v9, IPFIX)") templates: number;
  @Required() @Description("flow records per second over the last 5 minutes") records_per_sec: number;
}

@Description("One address prefix and the AS that announces it.")
export class AsnEntry {
  @Required() @MinLength(3) @MaxLength(49) @Description("IPv4 or IPv6 prefix, e.g. 192.0.2.0/24") prefix: string;
  @Description("AS number") @Required() @Integer() @Minimum(0) @Maximum(4294967295) asn: number;
  @Description("AS name; null = none") @Optional() @Nullable(String) @MaxLength(200) name?: string | null;
}

@AdditionalProperties(false)
@Description("Body of POST /flow/asn: address-prefix-to-AS entries to import.")
export class AsnImport {
  @Description("At most 100000 entries") @Required() @CollectionOf(AsnEntry) @MaxItems(100000) entries: AsnEntry[];
  @Optional() @Description("true (default): the table is replaced; false: entries are added or updated") replace?: boolean;
}

@Description("Counts of what an AS table import stored (POST /flow/asn).")
export class AsnImportResult {
  @Description("Prefixes written") @Required() @Integer() prefixes: number;
  @Description("AS names written") @Required() @Integer() names: number;
}

@Description("One flow export datagram and the exporter that sent it.")
export class ForwardedDatagram {
  @Required() @MinLength(3) @MaxLength(45) @Description("the exporter's address as the poller saw it") exporter: string;
  @Required() @MinLength(4) @MaxLength(87400) @Description("the datagram, base64") data: string;
}

@AdditionalProperties(false)
@Description("Flow datagrams a remote poller forwards as it received them (POST /flow/forwarded).")
export class ForwardedDatagrams {
  @Description("The forwarding poller") @Required() @MinLength(1) @MaxLength(100) poller_id: string;
  @Optional()
  @Pattern(POOL_NAME_PATTERN)
  @Description("the poller's pool: an exporter is attributed to a node of that pool first (two sites may reuse an address)")
  pool?: string;
  @Description("At most 500 datagrams") @Required() @CollectionOf(ForwardedDatagram) @MaxItems(500) datagrams: ForwardedDatagram[];
}

@Description("Answer to a poller forwarding flow datagrams (POST /flow/forwarded).")
export class FlowForwardedResult {
  @Description("Datagrams queued for decoding") @Required() @Integer() accepted: number;
  @Required() @Integer() @Description("not an address, or not base64") dropped: number;
}

@Description("What an AS database file import stored and skipped (POST /flow/asn/mmdb).")
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
