/**
 * Check ids of the incidents the engine raises without a threshold rule, and
 * incident keys. A threshold incident's check is the threshold's id.
 */

/** Check of the node liveness incident (state unreachable, no metric). */
export const LIVENESS_CHECK_ID = "6c1f3e0a-5b7d-4c2e-9a8f-1d4b7e2c9f01";
/** Check of the pool incident (every poller of a pool offline). */
export const POOL_CHECK_ID = "9e4a7c21-3f6b-4d8e-b5a2-7c0d1e9f4b02";

/** Check of the SNMP agent incident: the node answers its liveness check but its agent has not answered for a few polls. */
export const AGENT_CHECK_ID = "3b8d2f47-9c1e-4a6b-8e05-5f2a9d7c1e03";

/** Whether an incident's check is a threshold rule (not the liveness, pool or agent check). */
export function isThresholdCheck(checkId: string): boolean {
  return checkId !== LIVENESS_CHECK_ID && checkId !== POOL_CHECK_ID && checkId !== AGENT_CHECK_ID;
}

/** The metric name that mutes a node's liveness alert (the polling plugin's reachability metric). */
export const LIVENESS_MUTE_METRIC = "reachable";

/** One incident per subject + check (+ port or row); its severity may move, its ack is per severity. */
export function nodeIncidentKey(nodeId: string, checkId: string, ifindex: number | null, row: number | null): string {
  let key = `node:${nodeId.toLowerCase()}:${checkId}`;
  if (ifindex !== null) key += `:if:${ifindex}`;
  if (row !== null) key += `:row:${row}`;
  return key;
}

export function poolIncidentKey(pool: string): string {
  return `pool:${pool}:${POOL_CHECK_ID}`;
}
