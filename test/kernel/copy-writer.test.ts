import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import {
  copyLinesWithDeadLetters,
  copyRows,
  copyWithDeadLetters,
  encodeCopyText,
  isRowDataError,
  pruneDeadLetters,
  Store,
  type CopyColumn,
  type CopySpec,
} from "../../core/index.js";
import { JsonLogger } from "../../core/logging/Logger.js";
import { jsonbSafe } from "../../core/store/copyWriter.js";
import { migratePlugin } from "../../core/store/Migrator.js";
import { coreMigrations } from "../../core/store/coreMigrations.js";
import { makeRng } from "../support/fuzz.js";
import { createTestDatabase } from "../support/db.js";

let store: Store;

beforeAll(async () => {
  store = new Store(new pg.Pool({ connectionString: await createTestDatabase("nms_copy"), max: 4 }));
  await migratePlugin(store, "core", coreMigrations, new JsonLogger("warn", "test", () => undefined));
  await store.query(`
    CREATE TABLE rt (n int PRIMARY KEY, t text, u uuid, i4 int4, i8 int8, f8 float8, ok bool, ts timestamptz, ip inet, doc jsonb, tags text[], ids uuid[]);
    CREATE TABLE ev (k int PRIMARY KEY, msg text NOT NULL, level int CHECK (level BETWEEN 0 AND 7), at timestamptz, data jsonb, tag text);
    CREATE INDEX ev_tag ON ev (tag);
    CREATE TABLE offsets (o int PRIMARY KEY);
    CREATE FUNCTION ev_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.msg = 'boom' THEN RAISE EXCEPTION 'boom refused' USING ERRCODE = 'P0001'; END IF; RETURN NEW; END $$;
    CREATE TRIGGER ev_boom BEFORE INSERT ON ev FOR EACH ROW EXECUTE FUNCTION ev_boom();
  `);
});

afterAll(async () => {
  await store?.close();
});

beforeEach(async () => {
  await store.query("TRUNCATE rt, ev, offsets, core.dead_letters");
});

// ---- the COPY text encoding ----------------------------------------------------------------------------------------

interface Rt {
  n: number;
  t: string | null;
  u: string | null;
  i4: number | null;
  i8: bigint | null;
  f8: number | null;
  ok: boolean | null;
  ts: number | null;
  ip: string | null;
  doc: unknown;
  tags: (string | null)[] | null;
  ids: (string | null)[] | null;
}

const RT_COLUMNS: CopyColumn<Rt>[] = [
  { name: "n", type: "int", get: (r) => r.n },
  { name: "t", type: "text", get: (r) => r.t },
  { name: "u", type: "uuid", get: (r) => r.u },
  { name: "i4", type: "int", get: (r) => r.i4 },
  { name: "i8", type: "int", get: (r) => r.i8 },
  { name: "f8", type: "float", get: (r) => r.f8 },
  { name: "ok", type: "bool", get: (r) => r.ok },
  { name: "ts", type: "timestamptz_ms", get: (r) => r.ts },
  { name: "ip", type: "inet", get: (r) => r.ip },
  { name: "doc", type: "jsonb", get: (r) => r.doc },
  { name: "tags", type: "text[]", get: (r) => r.tags },
  { name: "ids", type: "uuid[]", get: (r) => r.ids },
];

/** Texts that need care: COPY's escapes and delimiters, array syntax, the NULL spellings, blanks, non-ASCII. */
const AWKWARD = [
  "",
  " ",
  "NULL",
  "null",
  "\\N",
  "\\.",
  "\\",
  "a\tb",
  "line\nbreak",
  "cr\rlf\r\n",
  'say "hi"',
  "back\\slash",
  '\\"',
  "a,b",
  "{x}",
  "{",
  "}",
  "'quote'",
  "é ✓ 日本 😀",
  "  padded  ",
  "\u0001\u0007\b\f\v\u007f",
  "\\t literally",
];

function randomText(next: () => number): string {
  // Whole code points (a lone UTF-16 surrogate is not text: the UTF-8 encoding turns it into U+FFFD).
  const alphabet = Array.from("ab ,{}\"\\'NUL\t\n\r€😀.");
  let s = "";
  for (let n = Math.floor(next() * 14); n > 0; n--) s += alphabet[Math.floor(next() * alphabet.length)];
  return s;
}

describe("encodeCopyText", () => {
  it("writes COPY text: escapes, \\N, array literals inside it, ISO timestamps, JSON", () => {
    const cols: CopyColumn<Record<string, unknown>>[] = [
      { name: "a", type: "text", get: (r) => r.a as string },
      { name: "b", type: "text", get: (r) => r.b as null },
      { name: "c", type: "text[]", get: (r) => r.c as string[] },
      { name: "d", type: "timestamptz_ms", get: (r) => r.d as number },
      { name: "e", type: "jsonb", get: (r) => r.e },
      { name: "f", type: "bool", get: (r) => r.f as boolean },
      { name: "g", type: "float", get: (r) => r.g as number },
      { name: "h", type: "int", get: (r) => r.h as bigint },
      { name: "i", type: "float", get: (r) => r.i as number },
      { name: "j", type: "text", get: (r) => r.j as string },
    ];
    const row = {
      a: "a\tb\\c\nd\re",
      b: null,
      c: ['x"y', "b\\s", null, "NULL", "t\tn", ""],
      d: 1775000000123,
      e: { a: 'q\\"', n: null },
      f: true,
      g: -0,
      h: 42n,
      i: NaN,
      j: "",
    };
    expect(encodeCopyText(cols, [row, { ...row, a: null, c: [], e: null, f: false, g: 1e21, i: -Infinity }])).toBe(
      String.raw`a\tb\\c\nd\re	\N	{"x\\"y","b\\\\s",NULL,"NULL","t\tn",""}	2026-03-31T23:33:20.123Z	{"a":"q\\\\\\"","n":null}	t	-0	42	NaN	` +
        "\n" +
        String.raw`\N	\N	{}	2026-03-31T23:33:20.123Z	\N	f	1e+21	42	-Infinity	` +
        "\n",
    );
  });
});

describe("copyRows", () => {
  it("stores every column type exactly as given, whatever the session's time zone and date style", async () => {
    const rng = makeRng(20260331);
    const texts = [...AWKWARD, ...Array.from({ length: 400 }, () => randomText(() => rng.next()))];
    const msValues = [0, -1, 1, 1775000000123, 1775000000999, 951782400000, -62135596800000, 253402300799999, 1e12 + 7];
    const floats = [0, -0, 1.5, -2.25e-300, 1.7976931348623157e308, 5e-324, 0.1, 1 / 3, NaN, Infinity, -Infinity, 123456789.12345679];
    const ips = ["192.0.2.1", "2001:db8::1", "10.0.0.0/8", "::ffff:192.0.2.1", "fe80::1/64"];
    const rows: Rt[] = texts.map((t, n) => ({
      n,
      t: n % 11 === 5 ? null : t,
      u: n % 13 === 3 ? null : randomUUID(),
      i4: [-2147483648, 2147483647, 0, null, n][n % 5],
      i8: [9007199254740993n, -9223372036854775808n, 9223372036854775807n, null, BigInt(n)][n % 5],
      f8: n % 17 === 4 ? null : floats[n % floats.length],
      ok: [true, false, null][n % 3],
      ts: n % 19 === 7 ? null : msValues[n % msValues.length],
      ip: n % 23 === 1 ? null : ips[n % ips.length],
      doc: n % 7 === 6 ? null : n % 7 === 5 ? t : { s: t, nested: [t, { k: "\\", q: '"', u: "\\u0041" }, null, 1.25], n, tags: texts.slice(n, n + 3) },
      tags: n % 29 === 2 ? null : n % 29 === 3 ? [] : [t, null, "NULL", "", texts[(n + 1) % texts.length]],
      ids: n % 31 === 2 ? null : [randomUUID(), null],
    }));
    await store.tx(async (client) => {
      await client.query("SET LOCAL TimeZone = 'Pacific/Chatham'");
      await client.query("SET LOCAL DateStyle = 'SQL, DMY'");
      expect(await copyRows(client, "public.rt", RT_COLUMNS, rows)).toBe(rows.length);
      expect(await copyRows(client, "public.rt", RT_COLUMNS, [])).toBe(0);
    });
    const back = await store.query(
      `SELECT n, t, u::text AS u, i4, i8::text AS i8, f8, ok, (extract(epoch FROM ts) * 1000)::int8::text AS ts, ip, doc, tags, ids::text[] AS ids,
              doc IS NULL AS doc_is_sql_null
         FROM rt ORDER BY n`,
    );
    expect(back.rows.length).toBe(rows.length);
    back.rows.forEach((b, i) => {
      const r = rows[i];
      expect({ ...b, doc_is_sql_null: undefined }).toEqual({
        n: r.n,
        t: r.t,
        u: r.u,
        i4: r.i4,
        i8: r.i8 === null ? null : String(r.i8),
        f8: r.f8,
        ok: r.ok,
        ts: r.ts === null ? null : String(r.ts),
        ip: r.ip,
        doc: r.doc,
        tags: r.tags,
        ids: r.ids,
        doc_is_sql_null: undefined,
      });
      expect(b.doc_is_sql_null).toBe(r.doc === null);
      if (typeof r.f8 === "number") expect(Object.is(b.f8, r.f8)).toBe(true); // -0 stays -0
    });
  });

  it("keeps the milliseconds of timestamps that share a second, in UTC", async () => {
    const base = 1775000000000;
    const rows = Array.from({ length: 1000 }, (_, i) => ({ k: i, ms: base + i }));
    const cols: CopyColumn<{ k: number; ms: number }>[] = [
      { name: "k", type: "int", get: (r) => r.k },
      { name: "msg", type: "text", get: () => "m" },
      { name: "at", type: "timestamptz_ms", get: (r) => r.ms },
    ];
    await store.tx((client) => copyRows(client, "public.ev", cols, rows));
    const back = await store.query<{ k: number; ms: string; iso: string }>(
      `SELECT k, (extract(epoch FROM at) * 1000)::int8::text AS ms, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS iso FROM ev ORDER BY k`,
    );
    expect(back.rows.map((r) => Number(r.ms))).toEqual(rows.map((r) => r.ms));
    expect(back.rows[123].iso).toBe("2026-03-31T23:33:20.123000Z");
  });

  it("fails the whole COPY on one bad row (no dead letters at this level)", async () => {
    await expect(store.tx((client) => copyRows(client, "public.ev", EV_COLUMNS, [ev(1), { ...ev(2), msg: "nul\u0000" }, ev(3)]))).rejects.toMatchObject({
      code: "22021",
    });
    expect((await store.query("SELECT count(*)::int AS n FROM ev")).rows[0].n).toBe(0);
  });
});

// ---- dead letters ---------------------------------------------------------------------------------------------------

interface Ev {
  k: number;
  msg: string | null;
  level: number | null;
  at: number | null;
  data: unknown;
  tag: string | null;
}

const EV_COLUMNS: CopyColumn<Ev>[] = [
  { name: "k", type: "int", get: (r) => r.k },
  { name: "msg", type: "text", get: (r) => r.msg },
  { name: "level", type: "int", get: (r) => r.level },
  { name: "at", type: "timestamptz_ms", get: (r) => r.at },
  { name: "data", type: "jsonb", get: (r) => r.data },
  { name: "tag", type: "text", get: (r) => r.tag },
];
const EV: CopySpec<Ev> = { table: `"public"."ev"`, columns: EV_COLUMNS };

/** A good row; `pad` makes the batch large enough to fill the socket's buffers (the refusal then comes mid-write). */
function ev(k: number, pad = 0): Ev {
  return { k, msg: `row ${k}${"x".repeat(pad)}`, level: k % 8, at: 1775000000000 + k, data: { k, text: `tab\there ${k}` }, tag: `t${k % 10}` };
}

interface DeadLetterRow {
  target: string;
  sqlstate: string | null;
  reason: string;
  detail: string | null;
  payload: Record<string, unknown>;
}

async function deadLetters(): Promise<DeadLetterRow[]> {
  return (await store.query<DeadLetterRow>("SELECT target, sqlstate, reason, detail, payload FROM core.dead_letters ORDER BY id")).rows;
}

async function storedKeys(): Promise<number[]> {
  return (await store.query<{ k: number }>("SELECT k FROM ev ORDER BY k")).rows.map((r) => r.k);
}

describe("copyWithDeadLetters", () => {
  it("stores the batch and dead-letters exactly the row PostgreSQL refuses (a NUL character: 22021)", async () => {
    const rows = Array.from({ length: 100 }, (_, k) => ev(k));
    rows[37] = { ...rows[37], msg: "bad\u0000row" };
    const outcome = await store.tx((client) => copyWithDeadLetters(client, EV, rows));
    expect(outcome).toEqual({ stored: 99, deadLettered: 1 });
    expect(await storedKeys()).toEqual(rows.map((r) => r.k).filter((k) => k !== 37));
    const [dl, ...more] = await deadLetters();
    expect(more).toEqual([]);
    expect(dl).toMatchObject({ target: "public.ev", sqlstate: "22021" });
    expect(dl.reason).toMatch(/invalid byte sequence/);
    // The row by column, as jsonb takes it: the NUL written as the text \u0000, the timestamp as RFC 3339 text.
    expect(dl.payload).toEqual({ k: 37, msg: "bad\\u0000row", level: 5, at: "2026-03-31T23:33:20.037Z", data: { k: 37, text: "tab\there 37" }, tag: "t7" });
  });

  it("finds every bad row spread over a batch of 1000, each with its SQLSTATE, and stores all the others", async () => {
    const rows = Array.from({ length: 1000 }, (_, k) => ev(k, 1000));
    const bad: Record<number, [Partial<Ev>, string]> = {
      0: [{ msg: "nul \u0000 at the start" }, "22021"],
      1: [{ level: 9 }, "23514"],
      250: [{ msg: null }, "23502"],
      251: [{ data: { s: "json nul \u0000" } }, "22P05"],
      500: [{ at: NaN }, "22007"],
      640: [{ level: 2 ** 40 }, "22003"],
      777: [{ k: 10 }, "23505"], // the key of row 10, stored before it
      901: [{ tag: randomBytes(12000).toString("base64") }, "54000"], // too large for the btree index ev_tag
      998: [{ level: 1.5 }, "22P02"],
      999: [{ msg: "nul at the end \u0000" }, "22021"],
    };
    for (const [i, [change]] of Object.entries(bad))
      rows[Number(i)] = { ...rows[Number(i)], ...change, msg: change.msg === undefined ? `bad ${i}` : change.msg };
    const outcome = await store.tx((client) => copyWithDeadLetters(client, EV, rows));
    const badIdx = Object.keys(bad).map(Number);
    expect(outcome).toEqual({ stored: 1000 - badIdx.length, deadLettered: badIdx.length });
    expect(await storedKeys()).toEqual(
      rows
        .map((r) => r.k)
        .filter((_, i) => !badIdx.includes(i))
        .sort((a, b) => a - b),
    );
    const dls = await deadLetters();
    const found = dls.map((d) => [d.payload.msg, d.sqlstate]);
    expect(found).toEqual(
      badIdx.map((i) => [
        bad[i][0].msg === undefined ? `bad ${i}` : bad[i][0].msg === null ? null : (bad[i][0].msg as string).replaceAll("\u0000", "\\u0000"),
        bad[i][1],
      ]),
    );
    for (const d of dls) expect(isRowDataError({ code: d.sqlstate, severity: "ERROR" })).toBe(true);
    // The payload reads back as a row of the table (jsonb_populate_record): the CHECK violation, here.
    const replay = await store.query("SELECT (jsonb_populate_record(NULL::ev, payload)).* FROM core.dead_letters WHERE sqlstate = '23514'");
    expect(replay.rows).toEqual([{ k: 1, msg: "bad 1", level: 9, at: new Date(1775000000001), data: { k: 1, text: "tab\there 1" }, tag: "t1" }]);
  });

  it("commits the caller's own statements with the batch, before and after a refused row", async () => {
    const rows = [ev(1), { ...ev(2), level: 99 }, ev(3)];
    await store.tx(async (client) => {
      await client.query("INSERT INTO offsets VALUES (1)");
      expect(await copyWithDeadLetters(client, EV, rows)).toEqual({ stored: 2, deadLettered: 1 });
      await client.query("INSERT INTO offsets VALUES (2)");
    });
    expect((await store.query("SELECT o FROM offsets ORDER BY o")).rows).toEqual([{ o: 1 }, { o: 2 }]);
    expect(await storedKeys()).toEqual([1, 3]);
    expect((await deadLetters()).map((d) => d.sqlstate)).toEqual(["23514"]);
  });

  it("leaves nothing, dead letters included, when the caller's transaction rolls back", async () => {
    const rows = [ev(1), { ...ev(2), level: 99 }, ev(3)];
    await expect(
      store.tx(async (client) => {
        await client.query("INSERT INTO offsets VALUES (3)");
        expect(await copyWithDeadLetters(client, EV, rows)).toEqual({ stored: 2, deadLettered: 1 });
        throw new Error("the caller gives up");
      }),
    ).rejects.toThrow("the caller gives up");
    expect((await store.query("SELECT count(*)::int AS n FROM offsets")).rows[0].n).toBe(0);
    expect(await storedKeys()).toEqual([]);
    expect(await deadLetters()).toEqual([]);
  });

  it("rethrows an error that is not about the data (a missing table), leaving the transaction aborted so nothing commits", async () => {
    const client = await store.pool!.connect();
    try {
      await client.query("BEGIN");
      await client.query("INSERT INTO offsets VALUES (4)");
      await expect(copyWithDeadLetters(client, { ...EV, table: "public.no_such_table" }, [ev(1), ev(2)])).rejects.toMatchObject({ code: "42P01" });
      // The caller's COMMIT turns into a rollback: its offsets are never recorded without the rows.
      expect((await client.query("COMMIT")).command).toBe("ROLLBACK");
      expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      client.release();
    }
    expect((await store.query("SELECT count(*)::int AS n FROM offsets")).rows[0].n).toBe(0);
    expect(await deadLetters()).toEqual([]);
  });

  it("rethrows a row error outside the data classes even in the middle of a split, and nothing of the batch stays", async () => {
    const rows = Array.from({ length: 100 }, (_, k) => ev(k));
    rows[5] = { ...rows[5], msg: "nul \u0000" };
    rows[50] = { ...rows[50], msg: "boom" };
    await expect(store.tx((client) => copyWithDeadLetters(client, EV, rows))).rejects.toMatchObject({ code: "P0001", message: "boom refused" });
    expect(await storedKeys()).toEqual([]);
    expect(await deadLetters()).toEqual([]);
  });

  it("dead-letters a row that cannot be encoded (a bigint in jsonb, a getter that throws) with no SQLSTATE", async () => {
    const rows = [ev(1), { ...ev(2), data: { big: 12345678901234567890n } }, ev(3), { ...ev(4), msg: "throws" }, ev(5)];
    const spec: CopySpec<Ev> = {
      ...EV,
      target: "events",
      columns: EV_COLUMNS.map((c) =>
        c.name === "msg"
          ? {
              ...c,
              get: (r: Ev) => {
                if (r.msg === "throws") throw new Error("no message");
                return r.msg;
              },
            }
          : c,
      ) as CopyColumn<Ev>[],
    };
    const counted: [unknown, number | undefined][] = [];
    const counter = { inc: (labels?: unknown, value?: number) => void counted.push([labels, value]) };
    expect(await store.tx((client) => copyWithDeadLetters(client, spec, rows, { counter }))).toEqual({ stored: 3, deadLettered: 2 });
    expect(await storedKeys()).toEqual([1, 3, 5]);
    const dls = await deadLetters();
    expect(dls.map((d) => [d.target, d.sqlstate, d.payload.k])).toEqual([
      ["events", null, 2],
      ["events", null, 4],
    ]);
    expect(dls[0].reason).toMatch(/could not be encoded for COPY: .*BigInt/);
    expect(dls[0].payload.data).toEqual({ big: "12345678901234567890" });
    expect(dls[1].payload.msg).toBe("[read failed: no message]");
    expect(counted).toEqual([[{ target: "events" }, 2]]);
  });

  it("dead-letters a lone UTF-16 surrogate in jsonb, its payload made valid (U+FFFD)", async () => {
    const rows = [ev(1), { ...ev(2), data: { s: "half \ud83d of an emoji 😀" } }, ev(3)];
    expect(await store.tx((client) => copyWithDeadLetters(client, EV, rows))).toEqual({ stored: 2, deadLettered: 1 });
    const [dl] = await deadLetters();
    expect(dl.sqlstate).toMatch(/^22/);
    expect(dl.payload.data).toEqual({ s: "half \ufffd of an emoji 😀" });
  });

  it("needs the caller's transaction", async () => {
    const client = await store.pool!.connect();
    try {
      await expect(copyWithDeadLetters(client, EV, [ev(1)])).rejects.toMatchObject({ code: "25P01" });
    } finally {
      client.release();
    }
    expect(await storedKeys()).toEqual([]);
  });
});

describe("copyLinesWithDeadLetters", () => {
  it("takes lines encoded elsewhere and dead-letters the refused ones with their fields as text", async () => {
    const rows = Array.from({ length: 50 }, (_, k) => ev(k));
    rows[20] = { ...rows[20], msg: "tab\tand \\ nul\u0000", data: null };
    const lines = rows.map((r) => encodeCopyText(EV_COLUMNS, [r]));
    const outcome = await store.tx((client) => copyLinesWithDeadLetters(client, { table: "public.ev", columns: EV_COLUMNS.map((c) => c.name) }, lines));
    expect(outcome).toEqual({ stored: 49, deadLettered: 1 });
    expect((await storedKeys()).length).toBe(49);
    const [dl] = await deadLetters();
    expect(dl.sqlstate).toBe("22021");
    expect(dl.payload).toEqual({ k: "20", msg: "tab\tand \\ nul\\u0000", level: "4", at: "2026-03-31T23:33:20.020Z", data: null, tag: "t0" });
  });
});

describe("jsonbSafe", () => {
  it("makes any value JSON that jsonb takes", async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const shared = { x: 1 };
    let deep: unknown = "bottom";
    for (let i = 0; i < 100; i++) deep = [deep];
    const value = {
      "key\u0000nul": "v\u0000",
      big: 2n ** 70n,
      nan: NaN,
      inf: -Infinity,
      when: new Date(1775000000123),
      skip: undefined,
      fn: () => 1,
      cyclic,
      shared: [shared, shared],
      deep,
    };
    const safe = jsonbSafe(value) as Record<string, unknown>;
    expect(safe).toMatchObject({
      "key\\u0000nul": "v\\u0000",
      big: "1180591620717411303424",
      nan: "NaN",
      inf: "-Infinity",
      when: "2026-03-31T23:33:20.123Z",
      cyclic: { a: 1, self: "[circular]" },
      shared: [{ x: 1 }, { x: 1 }],
    });
    expect(Object.keys(safe)).not.toContain("skip");
    expect(Object.keys(safe)).not.toContain("fn");
    expect(JSON.stringify(safe.deep)).toContain('"[too deep]"');
    const [row] = (await store.query<{ j: unknown }>("SELECT $1::jsonb AS j", [JSON.stringify(safe)])).rows;
    expect(row.j).toEqual(safe);
  });
});

describe("pruneDeadLetters", () => {
  it("deletes entries older than keepDays, then the oldest beyond maxRows", async () => {
    await store.query(
      `INSERT INTO core.dead_letters (at, target, sqlstate, reason, payload)
       SELECT now() - make_interval(days => d), 't', '22021', 'r', jsonb_build_object('d', d) FROM unnest(ARRAY[40, 31, 5, 4, 3, 2, 1]) d`,
    );
    expect(await pruneDeadLetters(store, 30, 3)).toBe(4);
    expect((await store.query("SELECT payload->>'d' AS d FROM core.dead_letters ORDER BY at")).rows).toEqual([{ d: "3" }, { d: "2" }, { d: "1" }]);
    expect(await pruneDeadLetters(store, 30, 3)).toBe(0);
  });
});
