/** The alert the channel-kind tests send: a critical CPU alert on node core-sw1. */
import type { AlertTransition } from "../../alerts/contract.js";

export const NODE = "11111111-2222-3333-4444-555555555555";
export const KEY = `node:${NODE}:cpu`;

export function alert(over: Partial<AlertTransition> = {}): AlertTransition {
  return {
    id: "7f0c3c1e-1d1e-4f43-9a44-0f2b8a3c9d10",
    incident_key: KEY,
    recorded_at: "2026-11-24T02:00:00.000Z",
    at_unix_ms: Date.parse("2026-11-24T02:00:00.000Z"),
    check: "cpu",
    direction: null,
    ifindex: null,
    if_name: null,
    metric: "cpu_load",
    node: NODE,
    observed_value: 97,
    threshold_value: 90,
    resolved: false,
    row: null,
    row_name: null,
    severity: "critical",
    state: "critical",
    subject_kind: "node",
    subject_name: "core-sw1",
    title: "CPU load above 90%",
    folder_path: [],
    ...over,
  };
}
