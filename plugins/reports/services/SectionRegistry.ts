/**
 * The section kinds this build can render: the built-in ones and those contributed to `reports.sections`, each with
 * its params schema compiled by ajv. Also checks a definition's spec: an object with `sections` (each `{kind,
 * title?, ...params}`) and an optional `range_days`; defaults of the params schemas are filled in.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { Inject, Injectable } from "@tsed/di";
import { ApiError, badRequest } from "../../../core/index.js";
import { REPORT_SECTIONS_POINT, type ReportSectionKind } from "../contract.js";
import { REPORTS_CONTEXT, type ReportsContext } from "../context.js";
import { BUILTIN_SECTIONS } from "../sections/index.js";

const KIND_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
const ajv = new Ajv({ allErrors: false, useDefaults: true, strict: false });

/** The extension point's check of a contributed kind (at boot; a throw names the contributor). */
export function validateSectionKind(item: unknown): void {
  const k = item as Partial<ReportSectionKind> | null;
  if (!k || typeof k !== "object") throw new Error("a section kind must be an object");
  if (typeof k.kind !== "string" || !KIND_PATTERN.test(k.kind)) throw new Error("kind must be lower-case letters, digits and _ (at most 63)");
  if (typeof k.title !== "string" || !k.title.trim()) throw new Error(`section kind ${k.kind}: title must be a non-empty string`);
  if (typeof k.render !== "function") throw new Error(`section kind ${k.kind}: render must be a function`);
  if (!k.paramsSchema || typeof k.paramsSchema !== "object") throw new Error(`section kind ${k.kind}: paramsSchema must be a JSON schema object`);
  try {
    ajv.compile(k.paramsSchema);
  } catch (err) {
    throw new Error(`section kind ${k.kind}: paramsSchema does not compile (${(err as Error).message})`);
  }
}

/** A checked spec: sections with their params (defaults filled in) and the range in days, if the spec names one. */
export interface CheckedSpec {
  sections: { kind: string; title: string; params: Record<string, unknown> }[];
  range_days: number | null;
}

@Injectable()
export class SectionRegistry {
  @Inject(REPORTS_CONTEXT)
  private ctx: ReportsContext;

  private kinds: Map<string, { kind: ReportSectionKind; check: ValidateFunction }> | null = null;

  private load(): Map<string, { kind: ReportSectionKind; check: ValidateFunction }> {
    if (this.kinds) return this.kinds;
    const map = new Map<string, { kind: ReportSectionKind; check: ValidateFunction }>();
    const contributed = this.ctx.extensions.get<ReportSectionKind>(REPORT_SECTIONS_POINT);
    for (const k of [...BUILTIN_SECTIONS, ...contributed]) {
      if (map.has(k.kind)) throw new Error(`reports: section kind "${k.kind}" is declared twice`);
      map.set(k.kind, { kind: k, check: ajv.compile(k.paramsSchema) });
    }
    this.kinds = map;
    return map;
  }

  list(): ReportSectionKind[] {
    return [...this.load().values()].map((v) => v.kind);
  }

  get(kind: string): ReportSectionKind | undefined {
    return this.load().get(kind)?.kind;
  }

  /** Byte size of the spec as JSON against the shared cap: 413 document_too_large above it. */
  checkSize(spec: unknown): void {
    const max = this.ctx.kernelConfig.limits.jsonDocumentMaxBytes;
    if (Buffer.byteLength(JSON.stringify(spec) ?? "", "utf8") > max)
      throw new ApiError(413, "document_too_large", `The spec is larger than this deployment accepts (limits.jsonDocumentMaxBytes, ${max} bytes).`);
  }

  /** Checks a spec; throws 400 (invalid_spec, too_many_sections, unknown_section_kind, invalid_section_params). */
  check(spec: unknown): CheckedSpec {
    if (!spec || typeof spec !== "object" || Array.isArray(spec)) throw badRequest("invalid_spec", "spec must be a JSON object.");
    const s = spec as Record<string, unknown>;
    for (const key of Object.keys(s))
      if (key !== "sections" && key !== "range_days") throw badRequest("invalid_spec", "spec may only hold sections and range_days.");
    if (!Array.isArray(s.sections)) throw badRequest("invalid_spec", "spec.sections must be an array of sections.");
    if (s.range_days !== undefined && (typeof s.range_days !== "number" || !Number.isInteger(s.range_days) || s.range_days < 1 || s.range_days > 366))
      throw badRequest("invalid_spec", "spec.range_days must be a whole number of days from 1 to 366.");
    if (s.sections.length > this.ctx.config.maxSections)
      throw badRequest("too_many_sections", `spec.sections holds more than ${this.ctx.config.maxSections} sections.`);
    const kinds = this.load();
    const sections = s.sections.map((raw, i) => {
      if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw badRequest("invalid_spec", `spec.sections[${i}] must be an object.`);
      const { kind, title, ...params } = raw as Record<string, unknown>;
      if (typeof kind !== "string") throw badRequest("invalid_spec", `spec.sections[${i}].kind must be a string.`);
      const found = kinds.get(kind);
      if (!found) throw badRequest("unknown_section_kind", `spec.sections[${i}]: this build cannot render section kind "${kind.slice(0, 64)}".`);
      if (title !== undefined && (typeof title !== "string" || !title.trim() || title.length > 200))
        throw badRequest("invalid_spec", `spec.sections[${i}].title must be a non-blank string of at most 200 characters.`);
      const copy = structuredClone(params);
      if (!found.check(copy)) {
        const e = found.check.errors?.[0];
        const where = e?.instancePath ? e.instancePath.slice(1).replace(/\//g, ".") : (e?.params as { additionalProperty?: string })?.additionalProperty;
        throw badRequest(
          "invalid_section_params",
          `spec.sections[${i}] (${kind}): ${where ? `${String(where).slice(0, 64)} ` : ""}${e?.message ?? "is not valid"}.`,
        );
      }
      return { kind, title: typeof title === "string" ? title.trim() : found.kind.title, params: copy };
    });
    return { sections, range_days: typeof s.range_days === "number" ? s.range_days : null };
  }
}
