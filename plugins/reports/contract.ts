/**
 * The reports plugin's contract: the section-kind extension point (`reports.sections`) other plugins contribute to,
 * and what a section kind receives and returns. Built-in kinds: availability, top_interfaces, alert_summary,
 * event_summary, flow_top, inventory (plugins/reports/sections/).
 */
import type { ConfigSchema, Scope } from "../../core/index.js";

/** The extension point: `contributes: { [REPORT_SECTIONS_POINT]: [myKind] }` (and `dependsOn: { reports: "^0.1.0" }`). */
export const REPORT_SECTIONS_POINT = "reports.sections";

/** A cell of a table: text, a number, or nothing. */
export type Cell = string | number | null;

/** One table of a section (an HTML table, a CSV block, a PDF table). */
export interface SectionTable {
  title: string;
  columns: string[];
  rows: Cell[][];
}

/** A bar chart (inline SVG in HTML, vector bars in the PDF): one bar per label. */
export interface SectionChart {
  title: string;
  /** Unit shown after each value ("%", "bit/s", "events"). */
  unit: string;
  labels: string[];
  values: number[];
}

/** What a section renders to: tables, optional charts, optional one-line notes ("no samples in the range"). */
export interface SectionData {
  tables: SectionTable[];
  charts?: SectionChart[];
  notes?: string[];
}

/** The time range a report covers: [from, to). */
export interface ReportRange {
  from: Date;
  to: Date;
}

/** What a section's render gets besides its params: read-only SQL (published views only) and the run's folder scope. */
export interface SectionContext {
  /** Runs a read-only query (a read-only transaction: writes fail). Read other plugins' published views, never their tables. */
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /** The folders the run covers (null = every folder). Filter with `folder_path && $n::uuid[]` (node_directory's folder_path). */
  scopeFolders: string[] | null;
}

/** A section kind, contributed to `reports.sections`. */
export interface ReportSectionKind {
  /** Identifier used in a spec's `{kind: ...}` (lower-case letters, digits, `_`; unique). */
  kind: string;
  /** Default heading of the section (a section's `title` param overrides it). */
  title: string;
  description?: string;
  /** JSON schema of the section's params (the spec's section object minus `kind` and `title`); checked with ajv on PUT/POST. */
  paramsSchema: ConfigSchema;
  /** Renders the section for `scope` over `range`. Must honour the scope (ctx.scopeFolders). */
  render(ctx: SectionContext, params: Record<string, unknown>, scope: Scope, range: ReportRange): Promise<SectionData>;
}
