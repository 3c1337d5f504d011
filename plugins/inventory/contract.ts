/**
 * The inventory plugin's public contract. Other plugins depend on "inventory" and
 * use only what is here: the published SQL views, the bus events, and the services
 * its manifest exports (each listed below with what dependants may call).
 */
import type { Scope } from "../../core/index.js";

/** `recordFacts(nodeId, facts)`: pollers report sysObjectID, sysDescr, sysName. */
export { NodeService } from "./services/NodeService.js";
/** `classify(sysObjectId, sysDescr)`: which profile a device gets. */
export { ClassifierService } from "./services/ClassifierService.js";
/** `reveal(id)`: a credential with its secrets, for pollers talking to devices; never reachable over HTTP. */
export { CredentialService } from "./services/CredentialService.js";
/**
 * `byIp(address, pool?)`, `node(id)`, `reload()`: address → node (id, name, folder path, pool) for attributing what devices send, a node of the
 * receiving pool first; canonicalIp() keys.
 */
export { NodeAddressBook, canonicalIp, type AttributedNode } from "./services/NodeAddressBook.js";
/** `setIpRanges(id, ranges)`: set a folder's own IP ranges (the ipam sync, for folders mapped to an IPAM site). */
export { FolderService } from "./services/FolderService.js";
/** `sweepSize`: most nodes one discovery import carries (a discovery sweep covers no more). */
export { InventoryLimits } from "./services/InventoryLimits.js";
/** `import(body)`: the discovery import (POST /discovery/import) for integrations that bring nodes in; reads the caller's scope (use runAsSystem in a job). */
export { DiscoveryService } from "./services/DiscoveryService.js";
export type { DiscoveryImportBody, DiscoveryImportResult } from "./models/DiscoveryModels.js";

/** Read-only view for other plugins: join it, never inventory's tables. */
export const NODE_DIRECTORY_VIEW = "inventory.node_directory";

/** Read-only view of profiles: id, name, parent_id, ancestors (itself first, then up to the root). */
export const PROFILE_DIRECTORY_VIEW = "inventory.profile_directory";

/** Read-only view of folders (migration 0910): id, name, parent_id, folder_path (root down to itself), folder_names, ip_ranges (cidr[]). */
export const FOLDER_RANGES_VIEW = "inventory.folder_ranges";

/** Columns of inventory.node_directory. */
export interface NodeDirectoryRow {
  id: string;
  name: string;
  address: string;
  group_id: string | null;
  /** Folder ids from the root down to the node's folder (empty at the tree root). */
  folder_path: string[];
  folder_names: string[];
  /** The node's pool, else its nearest folder's, else "default". */
  effective_pool: string;
  /** Tags inherited from the folders above plus its own, minus each level's tags_excluded. */
  effective_tags: string[];
  profile_id: string | null;
  vendor: string | null;
  model: string | null;
  /** What a poller needs (migration 0060): SNMP port, credential reference, the profile's poll interval, checks as stored (no secrets). */
  snmp_port: number;
  credential_id: string | null;
  poll_interval_secs: number | null;
  url_check: Record<string, unknown> | null;
  dns_check: Record<string, unknown> | null;
}

export interface NodeEvent {
  id: string;
  name: string;
  address: string;
  group_id: string | null;
  /** Folder ids from the root (for scoped delivery). */
  folder_path: string[];
}

export interface FolderEvent {
  id: string;
  name: string;
  parent_id: string | null;
  folder_path: string[];
}

declare module "../../core/bus/EventBus.js" {
  interface BusEvents {
    "inventory.node.created": NodeEvent;
    "inventory.node.updated": NodeEvent;
    "inventory.node.deleted": NodeEvent;
    "inventory.folder.created": FolderEvent;
    "inventory.folder.updated": FolderEvent;
    "inventory.folder.deleted": FolderEvent;
  }
}

/** What the classifier decided for a (sysObjectID, sysDescr) pair. */
export interface Classification {
  rule_id: string;
  profile_id: string;
  /** "sysobjectid" when a prefix matched (authoritative), "sysdescr" when only the regex did. */
  matched_by: "sysobjectid" | "sysdescr";
  vendor: string | null;
  model: string | null;
}

export type { Scope };
export type { NodeFacts } from "./models/NodeModels.js";
