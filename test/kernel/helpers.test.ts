import { randomUUID } from "node:crypto";
import {
  ApiError,
  assertPoolName,
  decodeCursor,
  encodeCursor,
  invalidCursor,
  invalidPool,
  isPgError,
  isPoolName,
  isUuid,
  PG_ERROR,
  pgConstraint,
  pgErrorCode,
  POOL_NAME_PATTERN,
  UUID_PATTERN,
} from "../../core/index.js";
import { adminDatabaseUrl, rawQuery } from "../support/db.js";

const CURSOR_MESSAGE = "The cursor is not valid; pass back the X-Next-Cursor value of the previous page.";

function thrown(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error("did not throw");
}

describe("isUuid", () => {
  it.each([randomUUID(), randomUUID().toUpperCase(), "00000000-0000-0000-0000-000000000000", "0190c3a2-7b1e-7d4f-8a2b-0123456789ab"])("accepts %s", (id) => {
    expect(isUuid(id)).toBe(true);
    expect(UUID_PATTERN.test(id)).toBe(true);
  });

  it.each([
    "",
    "not-a-uuid",
    `${randomUUID()}x`,
    ` ${randomUUID()}`,
    randomUUID().replace(/-/g, ""),
    `{${randomUUID()}}`,
    "0000000g-0000-0000-0000-000000000000",
    "00000000-0000-0000-0000-00000000000",
  ])("refuses %j", (id) => {
    expect(isUuid(id)).toBe(false);
  });

  it("refuses what is not a string", () => {
    for (const value of [undefined, null, 42, {}, [randomUUID()]]) expect(isUuid(value)).toBe(false);
  });
});

describe("PostgreSQL errors", () => {
  it("names the SQLSTATEs", () => {
    expect(PG_ERROR).toEqual({
      restrictViolation: "23001",
      foreignKeyViolation: "23503",
      uniqueViolation: "23505",
      checkViolation: "23514",
      invalidTextRepresentation: "22P02",
      invalidRegularExpression: "2201B",
      queryCanceled: "57014",
      featureNotSupported: "0A000",
    });
  });

  it("reads the code and constraint of a real error", async () => {
    const url = adminDatabaseUrl();
    const table = `pg_errors_${process.pid}`;
    await rawQuery(url, `CREATE TABLE ${table} (id int PRIMARY KEY, n int CONSTRAINT ${table}_n_check CHECK (n > 0))`);
    try {
      await rawQuery(url, `INSERT INTO ${table} VALUES (1, 1)`);
      const unique = await rawQuery(url, `INSERT INTO ${table} VALUES (1, 1)`).catch((e: unknown) => e);
      expect(pgErrorCode(unique)).toBe(PG_ERROR.uniqueViolation);
      expect(isPgError(unique, PG_ERROR.uniqueViolation)).toBe(true);
      expect(isPgError(unique, PG_ERROR.foreignKeyViolation, PG_ERROR.uniqueViolation)).toBe(true);
      expect(isPgError(unique, PG_ERROR.foreignKeyViolation)).toBe(false);
      expect(pgConstraint(unique)).toBe(`${table}_pkey`);

      const check = await rawQuery(url, `INSERT INTO ${table} VALUES (2, 0)`).catch((e: unknown) => e);
      expect(isPgError(check, PG_ERROR.checkViolation)).toBe(true);
      expect(pgConstraint(check)).toBe(`${table}_n_check`);

      const cast = await rawQuery(url, "SELECT 'nope'::uuid").catch((e: unknown) => e);
      expect(isPgError(cast, PG_ERROR.invalidTextRepresentation)).toBe(true);
      expect(pgConstraint(cast)).toBeUndefined();
    } finally {
      await rawQuery(url, `DROP TABLE ${table}`);
    }
  });

  it("answers nothing for what is not one", () => {
    for (const err of [undefined, null, "23505", 23505, new Error("x"), { code: 23505 }]) {
      expect(pgErrorCode(err)).toBeUndefined();
      expect(isPgError(err, PG_ERROR.uniqueViolation)).toBe(false);
      expect(pgConstraint(err)).toBeUndefined();
    }
    expect(isPgError({ code: "23505" }, PG_ERROR.uniqueViolation)).toBe(true);
  });
});

describe("pool names", () => {
  it.each(["default", "eu-west_1", "A", "p".repeat(63), "0"])("accepts %j", (pool) => {
    expect(isPoolName(pool)).toBe(true);
    expect(POOL_NAME_PATTERN.test(pool)).toBe(true);
    expect(() => assertPoolName(pool)).not.toThrow();
  });

  it.each(["", "p".repeat(64), "eu west", "eu.west", "a/b", "a:b", "ü", "pool!", " default"])("refuses %j with 400 invalid_pool", (pool) => {
    expect(isPoolName(pool)).toBe(false);
    const err = thrown(() => assertPoolName(pool));
    expect([err.status, err.code, err.message]).toEqual([400, "invalid_pool", "A pool name has 1 to 63 characters: letters, digits, _ and - only."]);
  });

  it("lets no pool through (null, undefined) and has one error", () => {
    expect(() => assertPoolName(null)).not.toThrow();
    expect(() => assertPoolName(undefined)).not.toThrow();
    expect(isPoolName(undefined)).toBe(false);
    expect(invalidPool().toEnvelope()).toEqual({
      error: { code: "invalid_pool", message: "A pool name has 1 to 63 characters: letters, digits, _ and - only." },
    });
  });
});

describe("keyset cursors", () => {
  it("round-trips the parts", () => {
    const token = encodeCursor(["b", "2021-06-01T12:00:00.123001Z"]);
    expect(decodeCursor(token, 2)).toEqual(["b", "2021-06-01T12:00:00.123001Z"]);
  });

  it.each([
    ["garbage", "garbage"],
    ["not base64url JSON", Buffer.from("{", "utf8").toString("base64url")],
    ["an object", Buffer.from(JSON.stringify({ a: 1 })).toString("base64url")],
    ["the wrong arity", encodeCursor(["a"])],
    ["a number part", Buffer.from(JSON.stringify(["a", 1])).toString("base64url")],
  ])("refuses %s with the one 400 invalid_cursor", (_label, token) => {
    const err = thrown(() => decodeCursor(token, 2));
    expect([err.status, err.code, err.message]).toEqual([400, "invalid_cursor", CURSOR_MESSAGE]);
  });

  it("refuses parts its check refuses, with the same error", () => {
    const id = randomUUID();
    expect(decodeCursor(encodeCursor(["x", id]), 2, ([, last]) => isUuid(last))).toEqual(["x", id]);
    const err = thrown(() => decodeCursor(encodeCursor(["x", "1; DROP TABLE"]), 2, ([, last]) => isUuid(last)));
    expect(err.toEnvelope()).toEqual(invalidCursor().toEnvelope());
    expect(invalidCursor().toEnvelope()).toEqual({ error: { code: "invalid_cursor", message: CURSOR_MESSAGE } });
  });
});
