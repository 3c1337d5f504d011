import { plainArrayLiteral, textArrayLiteral } from "../../core/index.js";
import { adminDatabaseUrl, rawQuery } from "../support/db.js";

/** Texts that need care in an array literal: separators, quotes, escapes, the word NULL, blanks, non-ASCII. */
const AWKWARD = ["", "NULL", "null", " ", "a,b", "{x}", 'say "hi"', "back\\slash", '\\"', "tab\there", "line\nbreak", "é ✓ 日本", "  padded  ", "}", "{"];

/** Random printable text with every special character of the array syntax among the letters. */
function randomText(rnd: () => number): string {
  const alphabet = "ab ,{}\"\\'NUL\t\n€";
  let s = "";
  for (let n = Math.floor(rnd() * 12); n > 0; n--) s += alphabet[Math.floor(rnd() * alphabet.length)];
  return s;
}

function seeded(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
}

describe("textArrayLiteral", () => {
  it("builds the literal without node-postgres's conversion", () => {
    expect(textArrayLiteral(["a", null, 'q"', "b\\"], (v) => v)).toBe('{"a",NULL,"q\\"","b\\\\"}');
    expect(textArrayLiteral([], (v: string) => v)).toBe("{}");
    expect(textArrayLiteral([{ k: "x" }, { k: undefined }], (r) => r.k)).toBe('{"x",NULL}');
  });

  it("reads back in PostgreSQL as exactly the texts, nulls and the word NULL apart", async () => {
    const rnd = seeded(7);
    const values: (string | null)[] = [...AWKWARD, null, ...Array.from({ length: 300 }, () => randomText(rnd)), null];
    const [row] = await rawQuery<{ a: (string | null)[] }>(adminDatabaseUrl(), "SELECT $1::text[] AS a", [textArrayLiteral(values, (v) => v)]);
    expect(row.a).toEqual(values);
  });

  it("serves uuid, inet and jsonb arrays through a cast", async () => {
    const ids = ["0b4c1d8e-7f60-4a3b-9c2d-1e2f3a4b5c6d", null];
    const [row] = await rawQuery<{ ids: string; ips: string[]; docs: unknown[] }>(
      adminDatabaseUrl(),
      "SELECT $1::uuid[]::text AS ids, (SELECT array_agg(host(x)) FROM unnest($2::inet[]) x) AS ips, (SELECT array_agg(x) FROM unnest($3::jsonb[]) x) AS docs",
      [
        textArrayLiteral(ids, (v) => v),
        textArrayLiteral(["192.0.2.1", "2001:db8::1"], (v) => v),
        textArrayLiteral([{ a: 'x"y', b: [1, "\\"] }, null], (v) => (v ? JSON.stringify(v) : null)),
      ],
    );
    expect(row.ids).toBe("{0b4c1d8e-7f60-4a3b-9c2d-1e2f3a4b5c6d,NULL}");
    expect(row.ips).toEqual(["192.0.2.1", "2001:db8::1"]);
    expect(row.docs).toEqual([{ a: 'x"y', b: [1, "\\"] }, null]);
  });
});

describe("plainArrayLiteral", () => {
  it("writes numbers and booleans as PostgreSQL reads them", () => {
    expect(plainArrayLiteral([1, -2.5, null, 1e21, NaN, Infinity, -Infinity], (v) => v)).toBe("{1,-2.5,NULL,1e+21,NaN,Infinity,-Infinity}");
    expect(plainArrayLiteral([true, false, undefined], (v) => v)).toBe("{t,f,NULL}");
  });

  it("reads back in PostgreSQL as the same numbers and booleans", async () => {
    const rnd = seeded(11);
    const floats = [0, -0.5, 1775000000123, 1e-7, 123456789.125, ...Array.from({ length: 200 }, () => (rnd() - 0.5) * 10 ** Math.floor(rnd() * 30))];
    const [row] = await rawQuery<{ f: number[]; i: number[]; b: boolean[]; special: string }>(
      adminDatabaseUrl(),
      "SELECT $1::float8[] AS f, $2::int2[] AS i, $3::bool[] AS b, $4::float8[]::text AS special",
      [
        plainArrayLiteral(floats, (v) => v),
        plainArrayLiteral([0, -32768, 32767, null], (v) => v),
        plainArrayLiteral([true, null, false], (v) => v),
        plainArrayLiteral([NaN, Infinity, -Infinity], (v) => v),
      ],
    );
    expect(row.f.map(Number)).toEqual(floats);
    expect(row.i).toEqual([0, -32768, 32767, null]);
    expect(row.b).toEqual([true, null, false]);
    expect(row.special).toBe("{NaN,Infinity,-Infinity}");
  });
});
