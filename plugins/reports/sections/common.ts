/** Helpers the built-in section kinds share: params schemas, scope filters and number formatting. */
import type { ConfigSchema } from "../../../core/index.js";

/** `limit` param: rows of each ranked table. */
export const limitSchema = { type: "integer", minimum: 1, maximum: 1000, default: 10 } as const satisfies ConfigSchema;

/** A params schema: the given properties, nothing else (`title` is taken by the section, never seen here). */
export function paramsSchema(properties: Record<string, ConfigSchema>): ConfigSchema {
  return { type: "object", additionalProperties: false, properties };
}

/** The limit param (the schema's default applies when absent). */
export function limitOf(params: Record<string, unknown>, fallback = 10): number {
  return typeof params.limit === "number" ? params.limit : fallback;
}

/** Rounds to `digits` decimals (numbers in tables and CSV stay readable and stable). */
export function round(value: number | null | undefined, digits = 2): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A folder path as people read it: "Europe / Berlin" (the tree root: "(root)"). */
export function folderLabel(names: readonly string[] | null | undefined): string {
  return names && names.length ? names.join(" / ") : "(root)";
}
