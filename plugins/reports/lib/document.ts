/** What a run rendered, as stored in runs.data and turned into HTML, CSV and PDF. */
import type { SectionData } from "../contract.js";

export interface RenderedSection {
  kind: string;
  title: string;
  /** Time the section took to render. */
  ms: number;
  data?: SectionData;
  /** Why the section could not be rendered (an operator-facing sentence, no internal text). */
  error?: string;
}

export interface ReportDocument {
  name: string;
  from: string;
  to: string;
  /** "All folders" or the folder names the run covers. */
  scope: string;
  generated_at: string;
  sections: RenderedSection[];
}

/** A number as a person reads it in a table: thousands grouped, at most 3 decimals. */
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return "";
  return v.toLocaleString("en-US", { maximumFractionDigits: 3 });
}

/** A chart value with a compact unit prefix (1.2 G bit/s). */
export function compact(v: number, unit: string): string {
  const abs = Math.abs(v);
  const [d, p] = abs >= 1e12 ? [1e12, "T"] : abs >= 1e9 ? [1e9, "G"] : abs >= 1e6 ? [1e6, "M"] : abs >= 1e4 ? [1e3, "k"] : [1, ""];
  const n = Math.round((v / d) * 100) / 100;
  return `${n}${p ? ` ${p}` : ""}${unit === "%" ? "%" : ` ${unit}`}`.replace(/ {2,}/g, " ");
}
