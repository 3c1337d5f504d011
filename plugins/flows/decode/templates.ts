/**
 * The template cache: templates keyed by (exporter, version, source id / observation domain, template id). A template
 * sent again replaces the one held (refresh); IPFIX withdrawals remove them. export()/import() move the templates as
 * plain JSON, so a restarted collector or another replica decodes data at once. Bounded: past `maxTemplates` the
 * template learned or refreshed longest ago is evicted.
 */
import { compile, type Plan } from "./fields.js";
import type { TemplateField, TemplateJson, TemplateKey } from "./types.js";

export interface CachedTemplate {
  readonly json: TemplateJson;
  readonly plan: Plan;
}

export type TemplateChange = "new" | "changed" | "same";

export interface TemplateCacheOptions {
  /** Most templates held over all exporters (default 50000). */
  maxTemplates?: number;
}

/** The cache's key text for a template. */
export function templateKeyText(exporter: string, version: number, domain: number, id: number): string {
  return `${exporter}|${version}|${domain}|${id}`;
}

function sameFields(a: readonly TemplateField[], b: readonly TemplateField[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].id !== b[i].id || a[i].length !== b[i].length || a[i].enterprise !== b[i].enterprise) return false;
  return true;
}

function isUint(v: unknown, max: number): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= max;
}

/** Checks one imported template; returns it normalised (only the known properties), or null when it is not valid. */
function validTemplate(v: unknown): TemplateJson | null {
  if (typeof v !== "object" || v === null) return null;
  const t = v as Record<string, unknown>;
  if (typeof t.exporter !== "string" || (t.version !== 9 && t.version !== 10)) return null;
  if (!isUint(t.domain, 0xffffffff) || !isUint(t.id, 0xffff) || t.id < 256 || typeof t.options !== "boolean") return null;
  if (!isUint(t.scope, 0xffff) || !Array.isArray(t.fields) || t.fields.length === 0 || t.fields.length > MAX_FIELDS || t.scope > t.fields.length) return null;
  if (typeof t.seen_ms !== "number" || !Number.isFinite(t.seen_ms)) return null;
  const fields: TemplateField[] = [];
  for (const f of t.fields as unknown[]) {
    if (typeof f !== "object" || f === null) return null;
    const { id, length, enterprise } = f as Record<string, unknown>;
    if (!isUint(id, 0x7fff) || !isUint(length, 0xffff) || length === 0 || !isUint(enterprise, 0xffffffff)) return null;
    fields.push({ id, length, enterprise });
  }
  return { exporter: t.exporter, version: t.version, domain: t.domain, id: t.id, options: t.options, scope: t.scope, fields, seen_ms: t.seen_ms };
}

/** More fields than fit in one 64 KiB set is nonsense. */
export const MAX_FIELDS = 16383;

export class TemplateCache {
  private readonly byKey = new Map<string, CachedTemplate>();
  private readonly perExporter = new Map<string, number>();
  private readonly max: number;
  private evictedCount = 0;

  constructor(opts: TemplateCacheOptions = {}) {
    this.max = Math.max(1, opts.maxTemplates ?? 50000);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Templates evicted by the size bound since this cache was made. */
  get evicted(): number {
    return this.evictedCount;
  }

  get(exporter: string, version: number, domain: number, id: number): CachedTemplate | undefined {
    return this.byKey.get(templateKeyText(exporter, version, domain, id));
  }

  getByText(key: string): CachedTemplate | undefined {
    return this.byKey.get(key);
  }

  /** Learns or refreshes a template (it becomes the newest for eviction). Says whether it was new, changed or the same. */
  set(t: TemplateJson): TemplateChange {
    const key = templateKeyText(t.exporter, t.version, t.domain, t.id);
    const old = this.byKey.get(key);
    let change: TemplateChange = "new";
    let entry: CachedTemplate;
    if (old) {
      this.byKey.delete(key);
      if (old.json.options === t.options && old.json.scope === t.scope && sameFields(old.json.fields, t.fields)) {
        change = "same";
        old.json.seen_ms = t.seen_ms;
        entry = old;
      } else {
        change = "changed";
        entry = { json: t, plan: compile(t.fields, t.version === 9 && t.options ? t.scope : 0) };
      }
    } else {
      entry = { json: t, plan: compile(t.fields, t.version === 9 && t.options ? t.scope : 0) };
      this.perExporter.set(t.exporter, (this.perExporter.get(t.exporter) ?? 0) + 1);
    }
    this.byKey.set(key, entry);
    while (this.byKey.size > this.max) {
      const oldest = this.byKey.keys().next().value as string;
      this.removeKey(oldest);
      this.evictedCount++;
    }
    return change;
  }

  /** Removes one template; true when it was held. */
  withdraw(exporter: string, version: number, domain: number, id: number): boolean {
    return this.removeKey(templateKeyText(exporter, version, domain, id));
  }

  /** Removes every template of an exporter's domain (IPFIX "withdraw all"), only options or only data ones; returns their keys. */
  withdrawAll(exporter: string, version: 9 | 10, domain: number, options: boolean): TemplateKey[] {
    const out: TemplateKey[] = [];
    for (const [key, e] of this.byKey) {
      const j = e.json;
      if (j.exporter === exporter && j.version === version && j.domain === domain && j.options === options) {
        out.push({ exporter, version, domain, id: j.id });
        this.removeKey(key);
      }
    }
    return out;
  }

  /** Forgets every template of an exporter (e.g. it restarted with a new configuration); returns how many. */
  forgetExporter(exporter: string): number {
    let n = 0;
    for (const [key, e] of this.byKey) if (e.json.exporter === exporter && this.removeKey(key)) n++;
    return n;
  }

  /** Templates held per exporter. */
  counts(): Record<string, number> {
    return Object.fromEntries(this.perExporter);
  }

  /** One template as JSON (a copy), e.g. to persist what DecodeResult.templatesLearned names. */
  exportOne(key: TemplateKey): TemplateJson | null {
    const e = this.get(key.exporter, key.version, key.domain, key.id);
    return e ? structuredClone(e.json) : null;
  }

  /** Every template as JSON, oldest first (import() of this list restores the same eviction order). */
  export(exporter?: string): TemplateJson[] {
    const out: TemplateJson[] = [];
    for (const e of this.byKey.values()) if (exporter === undefined || e.json.exporter === exporter) out.push(structuredClone(e.json));
    return out;
  }

  /** Loads templates (from export(), possibly through JSON text or a database). Invalid entries are skipped; returns how many were loaded. */
  import(list: readonly unknown[]): number {
    let n = 0;
    for (const v of list) {
      const t = validTemplate(v);
      if (!t) continue;
      this.set(t);
      n++;
    }
    return n;
  }

  private removeKey(key: string): boolean {
    const e = this.byKey.get(key);
    if (!e) return false;
    this.byKey.delete(key);
    const left = (this.perExporter.get(e.json.exporter) ?? 1) - 1;
    if (left > 0) this.perExporter.set(e.json.exporter, left);
    else this.perExporter.delete(e.json.exporter);
    return true;
  }
}
