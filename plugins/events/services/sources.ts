/** The catch-all sources of the listener streams (migration 0001 makes them; they cannot be deleted). */
export const BUILTIN_SOURCES = {
  syslog: "5e7a0c1d-2b3f-4a6e-9c8d-000000000514",
  trap: "5e7a0c1d-2b3f-4a6e-9c8d-000000000162",
} as const;

/** What the pipeline keeps of a source. */
export interface SourceEntry {
  id: string | null;
  kind: string;
  node_id: string | null;
  enabled: boolean;
}
