import type { Type } from "@tsed/core";
import { Integer, Maximum, MaxLength, Minimum, Returns } from "@tsed/schema";
import { badRequest, type ApiError } from "../errors.js";

/**
 * Keyset cursors for growing lists: an opaque token carrying the sort key of the
 * last row (text parts, timestamps at full microsecond precision). Lists answer
 * an array and, when a next page may exist, the header `X-Next-Cursor`; the
 * client passes it back as `?cursor=`.
 */
export const NEXT_CURSOR_HEADER = "X-Next-Cursor";

/** The query of a keyset-paged list (read with `@Query()`): the page size, and the cursor from the last page's header. */
export class PageQuery {
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 100;
  @MaxLength(2048) cursor?: string;
}

export function encodeCursor(parts: readonly string[]): string {
  return Buffer.from(JSON.stringify(parts), "utf8").toString("base64url");
}

/** 400 `invalid_cursor`: the one answer for a cursor this service did not issue (or that no longer reads). */
export function invalidCursor(): ApiError {
  return badRequest("invalid_cursor", `The cursor is not valid; pass back the ${NEXT_CURSOR_HEADER} value of the previous page.`);
}

/**
 * The cursor's parts, or 400 `invalid_cursor` when it is not one this service issued with `arity`
 * parts, or when `valid` (a check of the parts, e.g. that the last one is a uuid) refuses them: a
 * part that would fail its SQL cast must be refused here, not answered with a 500.
 */
export function decodeCursor(token: string, arity: number, valid?: (parts: string[]) => boolean): string[] {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parts) || parts.length !== arity || !parts.every((p) => typeof p === "string")) throw invalidCursor();
  if (valid && !valid(parts as string[])) throw invalidCursor();
  return parts as string[];
}

/** Given `limit + 1` rows, keeps `limit` and returns the next cursor when there were more. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => readonly string[]): { rows: T[]; next: string | null } {
  if (rows.length <= limit) return { rows, next: null };
  const kept = rows.slice(0, limit);
  return { rows: kept, next: encodeCursor(keyOf(kept[kept.length - 1])) };
}

/**
 * Answers one page of a keyset list from a controller: sets `X-Next-Cursor` when a next page may exist and
 * returns the rows (`return sendPage(ctx, await this.service.list(limit, cursor))`).
 */
export function sendPage<T>(ctx: { response: { setHeader(name: string, value: string): unknown } }, page: { rows: T[]; next: string | null }): T[] {
  if (page.next) ctx.response.setHeader(NEXT_CURSOR_HEADER, page.next);
  return page.rows;
}

/**
 * Declares a keyset-paginated list answer: 200, an array of `model`, and the
 * X-Next-Cursor header in the OpenAPI document.
 */
export function ReturnsPage(model: Type<unknown>) {
  return Returns(200, Array)
    .Of(model)
    .Header(NEXT_CURSOR_HEADER, { description: "Present when a next page may exist: pass it back as ?cursor=", type: "string" } as never);
}
