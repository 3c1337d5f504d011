/**
 * A plugin's configuration type, derived from the JSON schema of its `config` section,
 * so the schema is the one source (see docs/plugins.md#configuration).
 *
 * Covers the JSON schema a config section needs: `type` (one name, or a list such as
 * `["integer", "null"]`), `enum`, `const`, `items`, `properties`, `required` and `default`.
 * The kernel fills in defaults before a plugin sees its config, so a property with a
 * `default` is present, as is one listed in `required`; every other property is optional.
 */

type TypeName = "string" | "integer" | "number" | "boolean" | "null" | "array" | "object";

/** The subset of JSON schema a plugin's config is written in (checked by `definePlugin`). */
export interface ConfigSchema {
  type?: TypeName | readonly TypeName[];
  enum?: readonly unknown[];
  const?: unknown;
  items?: ConfigSchema;
  properties?: { readonly [key: string]: ConfigSchema };
  required?: readonly string[];
  additionalProperties?: boolean | ConfigSchema;
  default?: unknown;
  description?: string;
  [keyword: string]: unknown;
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type OfTypeName<N, S> = N extends "string"
  ? string
  : N extends "integer" | "number"
    ? number
    : N extends "boolean"
      ? boolean
      : N extends "null"
        ? null
        : N extends "array"
          ? S extends { items: infer I }
            ? ConfigOf<I>[]
            : unknown[]
          : N extends "object"
            ? ObjectOf<S>
            : unknown;

type PresentKeys<S> = S extends { properties: infer P }
  ? { [K in keyof P]: P[K] extends { default: unknown } ? K : S extends { required: readonly (infer R)[] } ? (K extends R ? K : never) : never }[keyof P]
  : never;

type ObjectOf<S> = S extends { properties: infer P }
  ? Simplify<{ -readonly [K in keyof P & PresentKeys<S>]: ConfigOf<P[K]> } & { -readonly [K in Exclude<keyof P, PresentKeys<S>>]?: ConfigOf<P[K]> }>
  : Record<string, unknown>;

/** The TypeScript type of a value valid against schema `S` (after the kernel applied defaults). */
export type ConfigOf<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { type: infer T }
      ? T extends readonly (infer N)[]
        ? OfTypeName<N, S>
        : OfTypeName<T, S>
      : unknown;
