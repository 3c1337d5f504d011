// The compiled JSON writer of hot routes (core/http/fastJson.ts) against Ts.ED's json-mapper + JSON.stringify, the path it
// replaces: for thousands of generated rows of every model that uses it (nulls, absent optionals, unicode, escapes, JSON
// data, extra properties), its bytes must equal the mapper's; where it declines (odd values), the mapper answers.
import type { Type } from "@tsed/core";
import { serialize } from "@tsed/json-mapper";
import { CollectionOf, Groups, Name, Nullable, Optional, Required, getPropertiesStores, type JsonPropertyStore } from "@tsed/schema";
import { compileModelWriter, writeJson } from "../../core/http/fastJson.js";
import { ActiveAlertView } from "../../plugins/alerts/models/AlertModels.js";
import { AlertHistoryRow, AlertTransitionView } from "../../plugins/alerts/models/HistoryModels.js";
import { MuteView } from "../../plugins/alerts/models/MuteModels.js";
import { ThresholdView } from "../../plugins/alerts/models/ThresholdModels.js";
import { EventView, StatsBucket } from "../../plugins/events/models/EventModels.js";
import { FolderView } from "../../plugins/inventory/models/FolderModels.js";
import { NodeView } from "../../plugins/inventory/models/NodeModels.js";
import { InterfaceSearchHit } from "../../plugins/polling/models/ConsoleModels.js";
import { InterfaceTopResult } from "../../plugins/polling/models/MetricsModels.js";

/** What Ts.ED's response filter sends for a 200 of `model` (PlatformResponseFilter.serialize, then res.json). */
const generic = (model: Type<unknown>, data: unknown) => JSON.stringify(serialize(data, { useAlias: true, type: model, endpoint: true } as never));

/** A small deterministic generator (xorshift), so a failure reproduces. */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  return { next, pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}
type R = ReturnType<typeof rng>;

const STRINGS = [
  "",
  "plain",
  "ünïcödé — ✓",
  "日本語のノード",
  "emoji 😀🚀",
  'quote " and backslash \\',
  "line\nbreak\ttab\rcr",
  "\u0000\u0001\u001f control",
  "\u2028\u2029 separators",
  "lone \ud800 surrogate",
  "</script><!--",
  "x".repeat(300),
  "2026-11-29T15:32:03.123456Z",
  "0b8d5a1e-5d7c-4c7e-9f8e-4d0a8e6b1c2d",
];
const NUMBERS = [0, -0, 1, -7, 1.5, 0.1 + 0.2, 1e21, 2 ** 53, -(2 ** 31), 1e-7, 123456789.125, Number.MAX_VALUE, Number.MIN_VALUE];
const JSON_DATA = [
  {},
  { a: 1, b: "ü", c: null, d: [1, "2", null, { e: true }] },
  JSON.parse('{"__proto__": {"x": 1}, "10": "ten", "2": "two", "z": []}'),
  { varbinds: [{ oid: "1.3.6.1.2.1.1.3.0", type: "timeticks", value: 12345 }], version: "v2c", pdu: "trap" },
  { nested: { deeper: { deepest: ["a", "\u2028", 1.5e-9] } } },
  [],
  "a string",
  42,
  true,
];

/** A value for one property; `odd` allows values outside the plain shapes (the writer must leave those to the mapper). */
function valueFor(p: JsonPropertyStore, r: R, odd: boolean, depth: number): unknown {
  const roll = r.next();
  if (roll < 0.12) return null;
  if (roll < 0.18) return undefined;
  if (odd && roll < 0.26) return r.pick([5, "12", "null", true, new Date(1_700_000_000_000), NaN, Infinity, new Set([1]), ["a"], { toJSON: () => "j" }]);
  const one = (): unknown => {
    const t = p.getBestType();
    if (t === String) return r.pick(STRINGS);
    if (t === Number) return r.pick(NUMBERS);
    if (t === Boolean) return r.next() < 0.5;
    if (t === Object) return r.pick(JSON_DATA);
    return depth > 3 ? null : rowFor(t as Type<unknown>, r, odd, depth + 1);
  };
  if (p.isCollection) return Array.from({ length: Math.floor(r.next() * 4) }, one);
  return one();
}

function rowFor(model: Type<unknown>, r: R, odd: boolean, depth = 0): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const p of getPropertiesStores(model).values()) {
    const v = valueFor(p as JsonPropertyStore, r, odd, depth);
    if (v !== undefined || r.next() < 0.5) row[String(p.propertyKey)] = v; // absent, or present as undefined
  }
  if (r.next() < 0.3) row.extra_column = "not in the model"; // repositories' helper columns (name_key, …): the mapper drops them
  return row;
}

const MODELS: [string, Type<unknown>][] = [
  ["NodeView", NodeView],
  ["AlertHistoryRow", AlertHistoryRow],
  ["AlertTransitionView", AlertTransitionView],
  ["EventView", EventView],
  ["InterfaceTopResult", InterfaceTopResult],
  ["ActiveAlertView", ActiveAlertView],
  ["ThresholdView", ThresholdView],
  ["MuteView", MuteView],
  ["FolderView", FolderView],
  ["InterfaceSearchHit", InterfaceSearchHit],
  ["StatsBucket", StatsBucket],
];

describe("fast JSON writer", () => {
  it.each(MODELS)("writes %s pages with the json-mapper's exact bytes", (_name, model) => {
    expect(compileModelWriter(model)).not.toBeNull();
    const r = rng(model.name.length * 7919);
    for (let page = 0; page < 60; page++) {
      const rows = Array.from({ length: 1 + Math.floor(r.next() * 40) }, () => rowFor(model, r, false));
      const fast = writeJson(model, rows);
      // Plain rows (nulls, absent and undefined fields, extra columns, any unicode) never need the mapper.
      expect(fast).toBeDefined();
      expect(fast).toBe(generic(model, rows));
      // One object answered as the model (interface-top answers an object, not a list).
      expect(writeJson(model, rows[0])).toBe(generic(model, rows[0]));
    }
    expect(writeJson(model, [])).toBe(generic(model, []));
  });

  it.each(MODELS)("leaves %s rows with odd values to the mapper, which then answers as before", (_name, model) => {
    const r = rng(model.name.length * 104729);
    let declined = 0;
    for (let page = 0; page < 200; page++) {
      const rows = Array.from({ length: 1 + Math.floor(r.next() * 5) }, () => rowFor(model, r, true));
      const fast = writeJson(model, rows);
      let expected: string | Error;
      try {
        expected = generic(model, rows);
      } catch (err) {
        expected = err as Error;
      }
      if (fast === undefined) declined++;
      // Where the writer answers, its bytes are the mapper's; where the mapper throws (NaN), the writer never answered.
      else expect(fast).toBe(expected);
    }
    expect(declined).toBeGreaterThan(0);
  });

  it("declines a class instance answered at the top (the mapper answers it as its own class)", () => {
    class Other {
      id = "x";
    }
    expect(writeJson(NodeView, new Other())).toBeUndefined();
    // Rows of any class inside a list are mapped with the declared model: the writer does the same.
    const rows = [Object.assign(new Other(), { name: "n", snmp_port: 161 })];
    expect(writeJson(NodeView, rows)).toBe(generic(NodeView, rows));
  });

  it("reproduces aliases and nested collections, and refuses what it does not reproduce", () => {
    class Inner {
      @Required() @Nullable(String) label: string | null;
      @Required() @CollectionOf(Number) values: number[];
    }
    class Outer {
      @Required() @Name("display_name") displayName: string;
      @Optional() @CollectionOf(Inner) inners?: Inner[];
      @Optional() @Nullable(Inner) one?: Inner | null;
    }
    class WithDate {
      @Required() at: Date;
    }
    class WithGroups {
      @Required() @Groups("!summary") secret: string;
    }
    const rows = [
      {
        displayName: "a",
        inners: [
          { label: "x", values: [1, 2.5] },
          { label: null, values: [] },
        ],
        one: null,
      },
      { displayName: "ü", inners: [], one: { label: "y", values: [0], extra: 1 } },
      { displayName: "b", inners: null },
    ];
    expect(writeJson(Outer, rows)).toBe(generic(Outer, rows));
    expect(JSON.parse(writeJson(Outer, rows)!)[0]).toHaveProperty("display_name", "a");
    expect(compileModelWriter(WithDate)).toBeNull();
    expect(compileModelWriter(WithGroups)).toBeNull();
  });
});
