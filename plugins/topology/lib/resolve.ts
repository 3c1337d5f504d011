/**
 * Neighbour → node resolution, in the order the issue asks: a management address a node here has, then the chassis id
 * a node here announced for itself, then a sysName (the node's own, else its name here; compared without case, the
 * full name or its first label). A key two nodes share resolves nothing: guessing would draw a wrong link.
 */
import { canonicalIp } from "../../../core/index.js";
import type { Observation } from "./mibs.js";

export interface DirectoryNode {
  id: string;
  name: string;
  address: string;
}

export interface KnownIdentity {
  node_id: string;
  chassis_key: string | null;
  sys_name: string | null;
}

export type ResolvedBy = "address" | "chassis_id" | "sys_name";

const AMBIGUOUS = "";

function put(map: Map<string, string>, k: string | null | undefined, id: string): void {
  if (!k) return;
  const prev = map.get(k);
  map.set(k, prev === undefined || prev === id ? id : AMBIGUOUS);
}

const names = (s: string | null | undefined): string[] => {
  const full = s?.trim().toLowerCase();
  if (!full) return [];
  const short = full.split(".")[0];
  return short && short !== full ? [full, short] : [full];
};

export class Resolver {
  private readonly byAddress = new Map<string, string>();
  private readonly byChassis = new Map<string, string>();
  private readonly bySysName = new Map<string, string>();

  /** `addressFallback`: another address book (inventory's NodeAddresses) asked when the directory has no node at an address. */
  constructor(
    nodes: readonly DirectoryNode[],
    identities: readonly KnownIdentity[],
    private readonly addressFallback: (ip: string) => string | null = () => null,
  ) {
    for (const n of nodes) put(this.byAddress, canonicalIp(n.address), n.id);
    for (const i of identities) this.learn(i.node_id, i.chassis_key, i.sys_name);
    // A node's name here counts as a sysName only where no node announced that sysName itself.
    const own = new Set(this.bySysName.keys());
    for (const n of nodes) for (const k of names(n.name)) if (!own.has(k)) put(this.bySysName, k, n.id);
  }

  /** What a node just said of itself (its chassis id and sysName), for the observations resolved after it. */
  learn(nodeId: string, chassisKey: string | null, sysName: string | null): void {
    put(this.byChassis, chassisKey, nodeId);
    for (const k of names(sysName)) put(this.bySysName, k, nodeId);
  }

  resolve(o: Pick<Observation, "mgmtAddresses" | "chassisId" | "sysName">): { nodeId: string; by: ResolvedBy } | null {
    for (const a of o.mgmtAddresses) {
      const id = this.byAddress.get(canonicalIp(a)) ?? this.addressFallback(a);
      if (id) return { nodeId: id, by: "address" };
    }
    const chassis = o.chassisId?.trim().toLowerCase();
    const byChassis = chassis ? this.byChassis.get(chassis) : undefined;
    if (byChassis) return { nodeId: byChassis, by: "chassis_id" };
    for (const k of names(o.sysName)) {
      const id = this.bySysName.get(k);
      if (id) return { nodeId: id, by: "sys_name" };
      if (id === AMBIGUOUS) break;
    }
    return null;
  }
}
