import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  Format,
  Integer,
  MaxLength,
  MinLength,
  Nullable,
  Optional,
  Property,
  Required,
} from "@tsed/schema";
import { PageQuery } from "../../../core/index.js";

const STATES = ["up", "gone"] as const;

@Description("A page of links or neighbours, optionally of one state.")
export class TopologyPageQuery extends PageQuery {
  @Optional() @Enum(...STATES) @Description("up (seen lately) or gone (not seen for goneAfterPolls polls); absent = both") state?: "up" | "gone";
}

@Description("One end of a link: the node and its interface.")
export class TopologyLinkEnd {
  @Required() @Format("uuid") @Description("The node at this end") node_id: string;
  @Required() @Description("The node's name") node_name: string;
  @Property() @Nullable(Number) @Integer() @Description("The interface's ifIndex; null when this end never reported the link") ifindex: number | null;
  @Property() @Nullable(String) @Description("The interface's name (ifName, else the port id the protocol gives); null when unknown") port: string | null;
}

@Description("A link between two nodes found by LLDP or CDP (GET /topology/links).")
export class TopologyLinkView {
  @Required() @Format("uuid") @Description("The link's id") id: string;
  @Required() @Description("The end with the lower node id") a: TopologyLinkEnd;
  @Required() @Description("The other end") b: TopologyLinkEnd;
  @Required() @CollectionOf(String) @Description("The protocols that reported it: lldp, cdp") protocols: string[];
  @Required() @Description("How the far end was resolved to a node: address (management address), chassis_id or sys_name") resolved_by: string;
  @Required() @Enum(...STATES) @Description("up, or gone: not seen for goneAfterPolls polls of its ends (kept, not deleted)") state: string;
  @Required() @Format("date-time") @Description("When it was first seen") first_seen: string;
  @Required() @Format("date-time") @Description("When a poll last saw it") last_seen: string;
  @Property() @Nullable(String) @Format("date-time") @Description("When it was marked gone; null while up") gone_at: string | null;
}

@Description("A node's neighbour: a link seen from that node's side (GET /nodes/{id}/neighbors).")
export class TopologyNeighborView {
  @Required() @Format("uuid") @Description("The link's id") link_id: string;
  @Property() @Nullable(Number) @Integer() @Description("ifIndex of the node's own interface; null when only the neighbour reported the link") local_ifindex:
    number | null;
  @Property() @Nullable(String) @Description("Name of the node's own interface") local_port: string | null;
  @Required() @Format("uuid") @Description("The neighbour node") node_id: string;
  @Required() @Description("The neighbour's name") node_name: string;
  @Property()
  @Nullable(Number)
  @Integer()
  @Description("ifIndex of the neighbour's interface; null when the neighbour never reported the link")
  remote_ifindex: number | null;
  @Property() @Nullable(String) @Description("Name of the neighbour's interface") remote_port: string | null;
  @Required() @CollectionOf(String) @Description("The protocols that reported it: lldp, cdp") protocols: string[];
  @Required() @Enum(...STATES) @Description("up or gone") state: string;
  @Required() @Format("date-time") @Description("When it was first seen") first_seen: string;
  @Required() @Format("date-time") @Description("When a poll last saw it") last_seen: string;
}

@Description("A node named by id and name.")
export class TopologyNodeRef {
  @Required() @Format("uuid") @Description("The node's id") node_id: string;
  @Required() @Description("The node's name") node_name: string;
}

@Description("A neighbour a node reports that resolves to no node here (GET /topology/neighbors/unknown); it can be imported as a node.")
export class TopologyUnknownNeighborView {
  @Required() @Format("uuid") @Description("The unknown neighbour's id (per reporting node, port and neighbour)") id: string;
  @Required() @Description("The node that reported it") seen_by: TopologyNodeRef;
  @Required() @Enum("lldp", "cdp") @Description("The protocol that reported it") protocol: string;
  @Property() @Nullable(Number) @Integer() @Description("ifIndex of the reporting node's interface") local_ifindex: number | null;
  @Property() @Nullable(String) @Description("Name of the reporting node's interface") local_port: string | null;
  @Property() @Nullable(String) @Description("LLDP chassis id (MAC addresses as colon-separated hex); null for CDP") chassis_id: string | null;
  @Property() @Nullable(String) @Description("LLDP system name, or CDP device id") sys_name: string | null;
  @Property() @Nullable(String) @Description("The neighbour's port") port: string | null;
  @Required() @CollectionOf(String) @Description("Management addresses it announced") mgmt_addresses: string[];
  @Property() @Nullable(String) @Description("CDP platform; null for LLDP") platform: string | null;
  @Required() @Enum(...STATES) @Description("up or gone") state: string;
  @Required() @Format("date-time") @Description("When it was first seen") first_seen: string;
  @Required() @Format("date-time") @Description("When a poll last saw it") last_seen: string;
}

@AdditionalProperties(false)
@Description("Body of POST /topology/neighbors/unknown/{id}/import: what the new node differs in from the defaults.")
export class TopologyNeighborImportBody {
  @Optional() @MinLength(1) @MaxLength(255) @Description("Node name; default: the neighbour's sysName, else its chassis id, else its address") name?: string;
  @Optional()
  @MinLength(1)
  @MaxLength(64)
  @Description("IP address; default: its first management address (400 no_address when it announced none)")
  address?: string;
  @Optional() @Nullable(String) @Format("uuid") @Description("Folder; default: the folder of the node that saw it; null = the tree root") group_id?:
    string | null;
  @Optional() @Nullable(String) @Format("uuid") @Description("Credential; default: the credential of the node that saw it; null = none") credential_id?:
    string | null;
}

@Description("The outcome of importing an unknown neighbour (POST /topology/neighbors/unknown/{id}/import).")
export class TopologyImportedNeighbor {
  @Property() @Nullable(String) @Format("uuid") @Description("The node at the address (new, or already there); null when it cannot be read back") node_id:
    string | null;
  @Required() @Description("false: a node already stood at that address, nothing was created") created: boolean;
  @Required() @Integer() @Description("Unknown neighbours that became links to it") links: number;
}

@AdditionalProperties(false)
@Description("Body of POST /topology/discover: one node, or every node the caller's scope covers.")
export class TopologyDiscoverBody {
  @Optional() @Nullable(String) @Format("uuid") @Description("The node to walk now (answered when done); absent or null = every node, queued (202)") node_id?:
    string | null;
}

@Description("What a discovery did or will do (POST /topology/discover).")
export class TopologyDiscoverResult {
  @Required() @Description("true: a run over every node was queued and the counts below are null") queued: boolean;
  @Required() @Integer() @Description("Nodes with a credential it walks") nodes: number;
  @Property() @Nullable(Number) @Integer() @Description("Nodes whose tables were read") walked: number | null;
  @Property() @Nullable(Number) @Integer() @Description("Nodes whose walk failed (no answer, refused credential)") failed: number | null;
  @Property() @Nullable(Number) @Integer() @Description("Links the walked nodes reported") links: number | null;
  @Property() @Nullable(Number) @Integer() @Description("Neighbours they reported that resolve to no node here") unknown: number | null;
  @Property() @Nullable(Number) @Integer() @Description("Links that appeared or came back") up: number | null;
  @Property() @Nullable(Number) @Integer() @Description("Links marked gone") gone: number | null;
}

@Description("A node on an upstream path.")
export class TopologyPathNode {
  @Required() @Format("uuid") @Description("The node's id") node_id: string;
  @Required() @Description("The node's name") name: string;
}

@Description("A node's upstream (GET /nodes/{id}/upstream): its parent and the path to its pool's seed node.")
export class TopologyUpstreamView {
  @Required() @Format("uuid") @Description("The node") node_id: string;
  @Required() @Description("Its poller pool") pool: string;
  @Property() @Nullable(String) @Format("uuid") @Description("The node it depends on; null at the seed, when not linked, or outside your scope") parent_id:
    string | null;
  @Required()
  @Enum("pin", "link", "seed", "none")
  @Description("pin: a person set the parent; link: inferred from the links; seed: the pool's seed; none: not linked to the seed")
  via: string;
  @Property() @Nullable(String) @Format("uuid") @Description("The pool's seed node (configured, else its node with most links); null when none") seed_id:
    string | null;
  @Required() @CollectionOf(TopologyPathNode) @Description("The parent first, then up to the seed") path: TopologyPathNode[];
  @Required() @Description("true: the path goes on through a node outside your scope") truncated: boolean;
}

@AdditionalProperties(false)
@Description("Body of PUT /nodes/{id}/parent: pins the node's parent (a pin wins over the inferred parent).")
export class TopologyParentBody {
  @Required()
  @Format("uuid")
  @Description("The parent node (400 unknown_reference when you cannot see it, parent_loop when it depends on this node)")
  parent_id: string;
}

export type LinkView = TopologyLinkView;
export type NeighborView = TopologyNeighborView;
export type UnknownNeighborView = TopologyUnknownNeighborView;
export type NeighborImportBody = TopologyNeighborImportBody;
export type ImportedNeighbor = TopologyImportedNeighbor;
