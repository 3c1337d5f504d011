/** What an analysis tool is and what a run gives it. Tools read stored data through published views only. */
export type Severity = "info" | "warning" | "critical";
export const SEVERITIES: readonly Severity[] = ["info", "warning", "critical"];

export type SubjectKind = "node" | "interface" | "subnet";

/** A node of the run's scope, from inventory.node_directory. */
export interface ToolNode {
  id: string;
  name: string;
  address: string;
  group_id: string | null;
  folder_path: string[];
}

/** A finding before it is saved (the run adds id, at, tool and job). */
export interface FindingDraft {
  severity: Severity;
  subject: { kind: SubjectKind; id: string; name: string };
  node_id: string | null;
  ifindex: number | null;
  /** The folder the subject is filed in (a node's folder, a subnet's folder); null at the tree root. */
  folder_id: string | null;
  /** Root down to that folder: who may see the finding. */
  folder_path: string[];
  message: string;
  data: Record<string, unknown>;
}

export interface ToolRun {
  /** A read-only query on the store. */
  query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /** The nodes of the scope (for a folder scope: every node filed beneath it). */
  nodes: ToolNode[];
  scope: { kind: "all" | "folder" | "node"; id: string | null; folders: string[] | null };
  /** Params, checked against the tool's schema with its defaults filled in. */
  params: Record<string, unknown>;
  now: Date;
  /** Reports progress (0–1). */
  progress(fraction: number): Promise<void>;
}

export interface AnalysisTool {
  /** snake_case, unique. */
  name: string;
  title: string;
  description: string;
  /** JSON schema of the params (type object, additionalProperties false, defaults for every key). */
  paramsSchema: Record<string, unknown>;
  run(run: ToolRun): Promise<FindingDraft[]>;
}

/** The subject and filing of an interface finding. */
export function interfaceSubject(node: ToolNode, ifindex: number, ifName: string | null) {
  return {
    subject: { kind: "interface" as const, id: `${node.id}:${ifindex}`, name: `${node.name} ${ifName ?? `ifIndex ${ifindex}`}` },
    node_id: node.id,
    ifindex,
    folder_id: node.group_id,
    folder_path: node.folder_path,
  };
}

export function nodeSubject(node: ToolNode) {
  return {
    subject: { kind: "node" as const, id: node.id, name: node.name },
    node_id: node.id,
    ifindex: null,
    folder_id: node.group_id,
    folder_path: node.folder_path,
  };
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
