/**
 * The inventory plugin's public contract. Other plugins depend on "inventory" and
 * use only what is here: the published SQL views, the bus events, and the contract tokens
 * its manifest exports (abstract classes: inject the token, never the class implementing it).
 * This file imports no service and no repository of the plugin; its internals import from it.
 */
import type { Scope } from "../../core/index.js";
import type { RevealedCredential } from "./models/CredentialModels.js";
import type { DiscoveryImportBody, DiscoveryImportResult } from "./models/DiscoveryModels.js";

/** The facts a poller learns about a node (NodeFacts.recordFacts); null = not known. */
export interface SystemFacts {
  sys_object_id: string | null;
  sys_descr: string | null;
  sys_name: string | null;
}

/** Pollers report what they learnt of a node. */
export abstract class NodeFacts {
  /** Stores sysObjectID, sysDescr, sysName (no caller, no scope); false when the node is gone. */
  abstract recordFacts(id: string, facts: SystemFacts): Promise<boolean>;
}

/** Which profile a device gets. */
export abstract class Classifier {
  abstract classify(sysObjectId: string | null, sysDescr: string | null): Promise<Classification | null>;
}

/** Credentials with their secrets, for pollers talking to devices; never reachable over HTTP. */
export abstract class Credentials {
  abstract reveal(id: string): Promise<RevealedCredential | null>;
}

/** Inventory's limits that its dependants honour too. */
export abstract class InventoryLimits {
  /** Most nodes one discovery import carries (a discovery sweep covers no more). */
  abstract readonly sweepSize: number;
}

/** A node as the address book gives it. */
export interface AttributedNode {
  id: string;
  name: string;
  folder_path: string[];
  /** The node's effective poller pool (its own, else its folder's, else `default`). */
  pool: string;
}

/**
 * Address → node (id, name, folder path, pool) for attributing what devices send; keyed by canonicalIp() text
 * (core). Kept in memory and re-read when inventory changes.
 */
export abstract class NodeAddresses {
  /** The node at `address`; with `pool` (the receiving poller's), a node of that pool first, else the first by name. */
  abstract byIp(address: string, pool?: string): AttributedNode | null;
  abstract node(id: string): AttributedNode | null;
  /** Every address with the node byIp(address, pool) gives (a worker thread holds a copy); keep it current with onReload. */
  abstract entries(pool: string): [string, AttributedNode][];
  /**
   * Calls `fn` after every read of the directory with the address keys (canonicalIp) whose byIp answer may have
   * changed, for any pool (empty: nothing changed); returns the unsubscribe.
   */
  abstract onReload(fn: (changed: readonly string[]) => void): () => void;
  /** Re-reads the directory now; concurrent calls share one read. */
  abstract reload(): Promise<void>;
}

/** Folders' own settings that another plugin manages. */
export abstract class Folders {
  /** Sets a folder's own IP ranges (the ipam sync, for folders mapped to an IPAM site), as a caller of `scope` ("All" in a job). */
  abstract setIpRanges(id: string, ranges: readonly string[], scope: Scope): Promise<void>;
}

/** The discovery import (POST /discovery/import) for integrations that bring nodes in. */
export abstract class DiscoveryImport {
  /** The discovery import (POST /discovery/import) as a caller of `scope` ("All" in a job). */
  abstract import(body: DiscoveryImportBody, scope: Scope): Promise<DiscoveryImportResult>;
}

export type { DiscoveryImportBody, DiscoveryImportResult, RevealedCredential };

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
