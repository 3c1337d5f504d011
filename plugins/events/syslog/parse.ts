/**
 * Syslog message parser: strict RFC 5424, lenient RFC 3164 (BSD) and Cisco IOS lines.
 *
 * Hand-written on purpose (the npm syslog parsers mis-read real traffic) and allocation-light: the
 * bytes are decoded to one UTF-8 string once, then read with charCodeAt/indexOf; fields are slices
 * of that string. No regular expressions on the hot path, so no backtracking hazards.
 *
 * Text safety: a message holding a NUL byte is refused as `binary`, and Node's UTF-8 decoder
 * replaces invalid sequences (including encoded surrogates) with U+FFFD, so the decoded string has
 * neither NUL nor lone surrogates. Fields are only ever cut at ASCII delimiters, which never split
 * a surrogate pair, so every string in a result is safe for PostgreSQL text columns.
 */
import type { SdElement, SyslogMessage } from "../lib/types.js";

export type ParseFailureReason = "empty" | "binary" | "invalid_pri" | "truncated";
export type ParseResult = { ok: true; msg: SyslogMessage } | { ok: false; reason: ParseFailureReason; raw: string | null };

const TAB = 9;
const LF = 10;
const CR = 13;
const SP = 32;
const QUOTE = 34;
const PERCENT = 37;
const STAR = 42;
const PLUS = 43;
const DASH = 45;
const DOT = 46;
const COLON = 58;
const LT = 60;
const EQ = 61;
const GT = 62;
const LBRACKET = 91;
const BACKSLASH = 92;
const RBRACKET = 93;
const BOM = 0xfeff;
const REPLACEMENT = 0xfffd;

/** Share of control bytes and undecodable sequences above which a message is `binary` (30 %). */
const BINARY_SHARE = 0.3;

/**
 * Parses one syslog message (one datagram or one frame). Never throws.
 * `nowMs` resolves the year of BSD timestamps (which have none): the latest year not putting the time in the future (see nearestYear).
 */
export function parseSyslog(buf: Buffer, nowMs: number): ParseResult {
  let end = buf.length;
  while (end > 0) {
    const b = buf[end - 1];
    if (b === LF || b === CR || b === 0) end--;
    else break;
  }
  if (end === 0) return { ok: false, reason: "empty", raw: null };

  // One pass over the bytes: a NUL means binary; count control bytes and non-ASCII bytes.
  let control = 0;
  let high = 0;
  let nul = false;
  for (let i = 0; i < end; i++) {
    const b = buf[i];
    if (b < SP) {
      if (b === 0) {
        nul = true;
        break;
      }
      if (b !== TAB && b !== LF && b !== CR) control++;
    } else if (b >= 0x7f) {
      if (b === 0x7f) control++;
      else high++;
    }
  }
  const text = buf.toString("utf8", 0, end);
  if (nul) return { ok: false, reason: "binary", raw: cleanText(text) };
  let bad = control;
  if (high > 0) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === REPLACEMENT) bad++;
  }
  if (bad > text.length * BINARY_SHARE) return { ok: false, reason: "binary", raw: text };

  // PRI: "<" 1*3DIGIT ">", 0..191, no leading zero except "<0>".
  const n = text.length;
  if (text.charCodeAt(0) !== LT) return { ok: false, reason: "invalid_pri", raw: text };
  let i = 1;
  let pri = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
    pri = pri * 10 + (c - 48);
    i++;
    if (i > 4) return { ok: false, reason: "invalid_pri", raw: text };
  }
  if (i >= n) return { ok: false, reason: "truncated", raw: text };
  const digits = i - 1;
  if (text.charCodeAt(i) !== GT || digits === 0 || pri > 191 || (digits > 1 && text.charCodeAt(1) === 48)) {
    return { ok: false, reason: "invalid_pri", raw: text };
  }
  i++;
  if (i >= n) return { ok: false, reason: "truncated", raw: text };

  let msg: SyslogMessage | null = null;
  if (text.charCodeAt(i) === 49 && text.charCodeAt(i + 1) === SP) msg = parse5424(text, i + 2, pri);
  if (msg === null) msg = parseCisco(text, i, pri, nowMs, null, null);
  if (msg === null) msg = parse3164(text, i, pri, nowMs);
  if (msg === null) msg = newMessage("raw", pri, null, null, null, null, null, [], messageFrom(text, i), null);
  return { ok: true, msg };
}

/**
 * Text PostgreSQL can store, never a failing insert: a NUL becomes the four characters `\x00` (escaped, so the
 * stored text still shows it) and a lone surrogate becomes U+FFFD (as an undecodable UTF-8 byte does).
 * Cheap when there are none.
 */
export function cleanText(s: string): string {
  let dirty = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0 || (c >= 0xd800 && c <= 0xdfff)) {
      dirty = true;
      break;
    }
  }
  if (!dirty) return s;
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) {
      out += "\\x00";
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += s[i] + s[i + 1];
        i++;
      } else out += "\uFFFD";
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      out += "\uFFFD";
      continue;
    }
    out += s[i];
  }
  return out;
}

/** The bytes as storable text: UTF-8 with invalid sequences replaced, NULs escaped as `\x00`, trailing CR/LF/NUL cut. */
export function rawText(buf: Buffer, maxBytes = buf.length): string {
  let end = Math.min(buf.length, maxBytes);
  while (end > 0 && (buf[end - 1] === LF || buf[end - 1] === CR || buf[end - 1] === 0)) end--;
  return cleanText(buf.toString("utf8", 0, end));
}

// ---- result ------------------------------------------------------------------------------------

/** Builds a result with every field in one order, so all messages share one object shape. */
function newMessage(
  format: SyslogMessage["format"],
  pri: number,
  timestamp: string | null,
  hostname: string | null,
  app_name: string | null,
  procid: string | null,
  msgid: string | null,
  structured_data: SdElement[],
  message: string,
  cisco: SyslogMessage["cisco"],
): SyslogMessage {
  return { format, facility: pri >> 3, severity: pri & 7, timestamp, hostname, app_name, procid, msgid, structured_data, message, cisco };
}

/** The rest of the text from `i`, without a leading byte-order mark. */
function messageFrom(s: string, i: number): string {
  if (i >= s.length) return "";
  if (s.charCodeAt(i) === BOM) i++;
  return i === 0 ? s : s.slice(i);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Reads `count` digits at `i`; -1 when any is not a digit. */
function num(s: string, i: number, count: number): number {
  let v = 0;
  for (let k = 0; k < count; k++) {
    const c = s.charCodeAt(i + k);
    if (c < 48 || c > 57) return -1;
    v = v * 10 + (c - 48);
  }
  return v;
}

// ---- RFC 5424 ----------------------------------------------------------------------------------

/** Strict RFC 5424 after "<PRI>1 " (at `i`); null when the header or structured data do not follow the grammar. */
function parse5424(s: string, i: number, pri: number): SyslogMessage | null {
  const n = s.length;
  let e = s.indexOf(" ", i);
  if (e <= i) return null;
  let timestamp: string | null = null;
  if (!(e - i === 1 && s.charCodeAt(i) === DASH)) {
    const ms = parseIso(s, i, e, true);
    timestamp = Number.isNaN(ms) ? null : isoText(ms);
  }
  i = e + 1;
  e = s.indexOf(" ", i);
  if (e <= i) return null;
  const hostname = nilOr(s, i, e);
  i = e + 1;
  e = s.indexOf(" ", i);
  if (e <= i) return null;
  const app = nilOr(s, i, e);
  i = e + 1;
  e = s.indexOf(" ", i);
  if (e <= i) return null;
  const procid = nilOr(s, i, e);
  i = e + 1;
  e = s.indexOf(" ", i);
  if (e <= i) return null;
  const msgid = nilOr(s, i, e);
  i = e + 1;
  if (i >= n) return null;
  const sd: SdElement[] = [];
  const c = s.charCodeAt(i);
  if (c === DASH) i++;
  else if (c === LBRACKET) {
    i = parseStructuredData(s, i, sd);
    if (i < 0) return null;
  } else return null;
  let message = "";
  if (i < n) {
    if (s.charCodeAt(i) !== SP) return null;
    message = messageFrom(s, i + 1);
  }
  return newMessage("rfc5424", pri, timestamp, hostname, app, procid, msgid, sd, message, null);
}

function nilOr(s: string, i: number, e: number): string | null {
  return e - i === 1 && s.charCodeAt(i) === DASH ? null : s.slice(i, e);
}

/** Reads SD-ELEMENTs from `i` (at "[") into `out`; returns the index after the last "]" or -1 on a grammar error. */
function parseStructuredData(s: string, i: number, out: SdElement[]): number {
  const n = s.length;
  while (i < n && s.charCodeAt(i) === LBRACKET) {
    i++;
    let j = i;
    while (j < n) {
      const c = s.charCodeAt(j);
      if (c === SP || c === RBRACKET) break;
      if (c === EQ || c === QUOTE) return -1;
      j++;
    }
    if (j === i || j >= n) return -1;
    const element: SdElement = { id: s.slice(i, j), params: [] };
    i = j;
    for (;;) {
      if (i >= n) return -1;
      const c = s.charCodeAt(i);
      if (c === RBRACKET) {
        i++;
        break;
      }
      if (c !== SP) return -1;
      i++;
      j = i;
      while (j < n) {
        const d = s.charCodeAt(j);
        if (d === EQ) break;
        if (d === SP || d === RBRACKET || d === QUOTE) return -1;
        j++;
      }
      if (j === i || j + 1 >= n || s.charCodeAt(j + 1) !== QUOTE) return -1;
      const name = s.slice(i, j);
      i = j + 2;
      // PARAM-VALUE: '"', '\' and ']' arrive escaped with '\'; a '\' before anything else is kept as is.
      let start = i;
      let value: string | null = null;
      for (;;) {
        if (i >= n) return -1;
        const d = s.charCodeAt(i);
        if (d === QUOTE) break;
        if (d === BACKSLASH && i + 1 < n) {
          const x = s.charCodeAt(i + 1);
          if (x === QUOTE || x === BACKSLASH || x === RBRACKET) {
            value = (value ?? "") + s.slice(start, i);
            start = i + 1;
            i += 2;
            continue;
          }
        }
        i++;
      }
      element.params.push([name, value === null ? s.slice(start, i) : value + s.slice(start, i)]);
      i++;
    }
    out.push(element);
  }
  return i;
}

/**
 * RFC 3339 time in s[i, e) to epoch ms (fraction truncated to ms); NaN when invalid.
 * `needOffset` (RFC 5424) requires "Z" or an offset; without it a missing zone means UTC.
 */
function parseIso(s: string, i: number, e: number, needOffset: boolean): number {
  if (e - i < 19) return NaN;
  const year = num(s, i, 4);
  const month = num(s, i + 5, 2);
  const day = num(s, i + 8, 2);
  const sep = s.charCodeAt(i + 10);
  const hour = num(s, i + 11, 2);
  const minute = num(s, i + 14, 2);
  const second = num(s, i + 17, 2);
  if (s.charCodeAt(i + 4) !== DASH || s.charCodeAt(i + 7) !== DASH || s.charCodeAt(i + 13) !== COLON || s.charCodeAt(i + 16) !== COLON) return NaN;
  if (sep !== 84 && sep !== 116) return NaN; // "T" or "t"
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month - 1) || hour < 0 || hour > 23 || minute < 0 || minute > 59) return NaN;
  if (second < 0 || second > 60) return NaN;
  let p = i + 19;
  let ms = 0;
  if (p < e && s.charCodeAt(p) === DOT) {
    p++;
    const from = p;
    while (p < e && isDigit(s.charCodeAt(p))) {
      if (p - from < 3) ms = ms * 10 + (s.charCodeAt(p) - 48);
      p++;
    }
    if (p === from || p - from > 9) return NaN;
    for (let k = p - from; k < 3; k++) ms *= 10;
  }
  let offsetMin = 0;
  if (p === e) {
    if (needOffset) return NaN;
  } else {
    const z = s.charCodeAt(p);
    if ((z === 90 || z === 122) && p + 1 === e) {
      // "Z"
    } else if (z === PLUS || z === DASH) {
      const oh = num(s, p + 1, 2);
      let om: number;
      if (e - p === 6 && s.charCodeAt(p + 3) === COLON) om = num(s, p + 4, 2);
      else if (e - p === 5) om = num(s, p + 3, 2);
      else return NaN;
      if (oh < 0 || oh > 23 || om < 0 || om > 59) return NaN;
      offsetMin = (z === DASH ? -1 : 1) * (oh * 60 + om);
    } else return NaN;
  }
  // A leap second (":60") is stored as the last millisecond-aligned instant of that minute.
  const t = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), second === 60 ? 999 : ms);
  return t - offsetMin * 60_000;
}

/** Last formatted time (module cache): a burst of messages mostly shares its timestamp, and Date formatting is the costliest step. */
let isoMs = NaN;
let isoStr = "";

/** Epoch ms as RFC 3339 UTC text with milliseconds ("2026-11-24T10:00:00.123Z"). */
function isoText(ms: number): string {
  if (ms !== isoMs) {
    isoStr = new Date(ms).toISOString();
    isoMs = ms;
  }
  return isoStr;
}

/** Start and end (epoch ms) of the UTC year last asked for (module cache), and that year. */
let yearStart = 0;
let yearEnd = -1;
let yearValue = 1970;

function utcYear(ms: number): number {
  if (ms < yearStart || ms >= yearEnd) {
    yearValue = new Date(ms).getUTCFullYear();
    yearStart = Date.UTC(yearValue, 0, 1);
    yearEnd = Date.UTC(yearValue + 1, 0, 1);
  }
  return yearValue;
}

function daysIn(year: number, month0: number): number {
  if (month0 === 1) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month0 === 3 || month0 === 5 || month0 === 8 || month0 === 10 ? 30 : 31;
}

// ---- BSD timestamps ----------------------------------------------------------------------------

/** Month index of "Jan".."Dec" (any case) at `i`, or -1. */
function monthAt(s: string, i: number): number {
  const a = s.charCodeAt(i) | 32;
  const b = s.charCodeAt(i + 1) | 32;
  const c = s.charCodeAt(i + 2) | 32;
  switch (a) {
    case 106: // j
      if (b === 97 && c === 110) return 0;
      if (b === 117 && c === 110) return 5;
      if (b === 117 && c === 108) return 6;
      return -1;
    case 102: // f
      return b === 101 && c === 98 ? 1 : -1;
    case 109: // m
      if (b === 97 && c === 114) return 2;
      if (b === 97 && c === 121) return 4;
      return -1;
    case 97: // a
      if (b === 112 && c === 114) return 3;
      if (b === 117 && c === 103) return 7;
      return -1;
    case 115: // s
      return b === 101 && c === 112 ? 8 : -1;
    case 111: // o
      return b === 99 && c === 116 ? 9 : -1;
    case 110: // n
      return b === 111 && c === 118 ? 10 : -1;
    case 100: // d
      return b === 101 && c === 99 ? 11 : -1;
    default:
      return -1;
  }
}

/** Offsets (minutes) of the zone names devices print after a time; an unknown name is read as UTC. */
const ZONES: Record<string, number> = {
  UTC: 0,
  GMT: 0,
  UT: 0,
  Z: 0,
  WET: 0,
  WEST: 60,
  BST: 60,
  CET: 60,
  CEST: 120,
  MET: 60,
  MEST: 120,
  EET: 120,
  EEST: 180,
  MSK: 180,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
  JST: 540,
  KST: 540,
  AEST: 600,
  AEDT: 660,
};

/** Where the last readBsdTime() stopped, and its epoch ms (module scratch: avoids a result object per message). */
let bsdEnd = 0;

/**
 * Reads "Mmm dd [yyyy ]hh:mm:ss[.fff]" at `i` (day space-padded or not). With `zone`, an optional
 * " NAME" zone follows (Cisco). Returns epoch ms (year picked from `nowMs` when absent, see nearestYear) or NaN; sets bsdEnd.
 * Times without a zone are read as UTC: the sender's zone is unknown.
 */
function readBsdTime(s: string, i: number, nowMs: number, zone: boolean): number {
  const n = s.length;
  const month = monthAt(s, i);
  if (month < 0 || s.charCodeAt(i + 3) !== SP) return NaN;
  let p = i + 4;
  if (s.charCodeAt(p) === SP) p++;
  let day = 0;
  const d0 = p;
  while (p < n && isDigit(s.charCodeAt(p)) && p - d0 < 2) day = day * 10 + (s.charCodeAt(p++) - 48);
  if (p === d0 || day < 1 || day > 31 || s.charCodeAt(p) !== SP) return NaN;
  p++;
  let year = -1;
  if (isDigit(s.charCodeAt(p + 2)) && s.charCodeAt(p + 4) === SP) {
    year = num(s, p, 4);
    if (year < 0) return NaN;
    p += 5;
  }
  const hour = num(s, p, 2);
  const minute = num(s, p + 3, 2);
  const second = num(s, p + 6, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return NaN;
  if (s.charCodeAt(p + 2) !== COLON || s.charCodeAt(p + 5) !== COLON) return NaN;
  p += 8;
  let ms = 0;
  if (s.charCodeAt(p) === DOT && isDigit(s.charCodeAt(p + 1))) {
    p++;
    const from = p;
    while (p < n && isDigit(s.charCodeAt(p))) {
      if (p - from < 3) ms = ms * 10 + (s.charCodeAt(p) - 48);
      p++;
    }
    for (let k = p - from; k < 3; k++) ms *= 10;
  }
  let offsetMin = 0;
  if (zone && s.charCodeAt(p) === SP) {
    let q = p + 1;
    while (q < n && q - p <= 5) {
      const c = s.charCodeAt(q) & ~32;
      if (c < 65 || c > 90) break;
      q++;
    }
    if (q > p + 1 && s.charCodeAt(q) === COLON) {
      offsetMin = ZONES[s.slice(p + 1, q).toUpperCase()] ?? 0;
      p = q;
    }
  }
  const sec = Math.min(second, 59);
  let t: number;
  if (year >= 0) {
    if (day > daysIn(year, month)) return NaN;
    t = Date.UTC(year, month, day, hour, minute, sec, ms);
  } else {
    t = nearestYear(month, day, hour, minute, sec, ms, nowMs);
    if (Number.isNaN(t)) return NaN;
  }
  bsdEnd = p;
  return t - offsetMin * 60_000;
}

/** How far ahead of now a yearless time may be (clock skew, zones read as UTC) before it is taken as last year's. */
const FUTURE_SLACK_MS = 2 * 86_400_000;

/**
 * A yearless time in the latest year that does not put it in the future (beyond a small slack): a December
 * line read in January belongs to last year, a line a few seconds ahead at New Year to next year.
 * Feb 29 goes back to the last leap year.
 */
function nearestYear(month: number, day: number, hour: number, minute: number, second: number, ms: number, nowMs: number): number {
  const y = utcYear(nowMs);
  for (let year = y + 1; year >= y - 8; year--) {
    if (day > daysIn(year, month)) continue;
    const t = Date.UTC(year, month, day, hour, minute, second, ms);
    if (t <= nowMs + FUTURE_SLACK_MS) return t;
  }
  return NaN;
}

// ---- Cisco IOS ---------------------------------------------------------------------------------

/**
 * A Cisco IOS line from `i`: "[seq: ][host: ][*|.]Mmm dd [yyyy ]hh:mm:ss[.fff][ TZ]: %FAC-SEV-MNEMONIC: text"
 * (the timestamp may also be an uptime such as "1w2d:" or "00:01:02:", or absent). Null unless the
 * %FAC-SEV-MNEMONIC tag is there. `host`/`timestamp` come from a BSD header a relay put in front, if any.
 */
function parseCisco(s: string, i: number, pri: number, nowMs: number, host: string | null, timestamp: string | null): SyslogMessage | null {
  const n = s.length;
  let seq: number | null = null;
  for (let k = 0; k < 2 && i < n; k++) {
    const c0 = s.charCodeAt(i);
    if (c0 === STAR || c0 === DOT || c0 === PERCENT) break;
    let j = i;
    let allDigits = true;
    let uptime = true;
    while (j < n && j - i <= 64) {
      const c = s.charCodeAt(j);
      if (c === COLON || c === SP) break;
      if (!isDigit(c)) {
        allDigits = false;
        if (c !== 100 && c !== 104 && c !== 109 && c !== 119 && c !== 121) uptime = false; // d h m w y
      }
      j++;
    }
    if (j === i || s.charCodeAt(j) !== COLON || s.charCodeAt(j + 1) !== SP) break;
    if (allDigits && seq === null) seq = num(s, i, Math.min(j - i, 15));
    else if (!allDigits && uptime && isDigit(c0))
      break; // "1w2d:" is an uptime stamp, read below
    else if (host === null && !allDigits) host = s.slice(i, j);
    else break;
    i = j + 2;
  }
  if (i >= n) return null;
  let c = s.charCodeAt(i);
  if (c !== PERCENT) {
    if (c === STAR || c === DOT) i++;
    const t = readBsdTime(s, i, nowMs, true);
    if (!Number.isNaN(t)) {
      if (s.charCodeAt(bsdEnd) !== COLON || s.charCodeAt(bsdEnd + 1) !== SP) return null;
      timestamp = isoText(t);
      i = bsdEnd + 2;
    } else {
      // An uptime stamp ("00:01:02:", "1w2d:", "3d04h:"): digits, ':' and unit letters, ending in ": ".
      const from = i;
      while (i < n && i - from < 24) {
        c = s.charCodeAt(i);
        if (c === COLON && s.charCodeAt(i + 1) === SP) break;
        if (!isDigit(c) && c !== COLON && c !== DOT && c !== 100 && c !== 104 && c !== 109 && c !== 119 && c !== 121) return null;
        i++;
      }
      if (i === from || s.charCodeAt(i) !== COLON) return null;
      i += 2;
    }
    if (i >= n || s.charCodeAt(i) !== PERCENT) return null;
  }
  // %FAC-SEV-MNEMONIC: the first "-d-" with a severity digit splits it (a facility may hold '-' or '_').
  const tagStart = i;
  let j = i + 1;
  while (j < n) {
    c = s.charCodeAt(j);
    if (c === COLON || c === SP) break;
    j++;
  }
  if (j >= n || s.charCodeAt(j) !== COLON) return null;
  let k = tagStart + 2;
  while (k + 2 < j) {
    if (s.charCodeAt(k) === DASH && s.charCodeAt(k + 2) === DASH) {
      const sev = s.charCodeAt(k + 1) - 48;
      if (sev >= 0 && sev <= 7 && k + 3 < j) {
        const cisco = { seq, facility: s.slice(tagStart + 1, k), severity: sev, mnemonic: s.slice(k + 3, j) };
        return newMessage("cisco", pri, timestamp, host, null, null, null, [], s.slice(tagStart), cisco);
      }
    }
    k++;
  }
  return null;
}

// ---- RFC 3164 ----------------------------------------------------------------------------------

/**
 * Lenient RFC 3164 from `i`: "[TIMESTAMP ][HOSTNAME ]TAG[[pid]]: MSG", TIMESTAMP a BSD or an ISO time.
 * Without a timestamp only a leading TAG makes it 3164 (RFC 3164 §4.3.3: the rest is all content).
 * Null when neither a timestamp nor a tag is there (the caller keeps it as `raw`).
 */
function parse3164(s: string, i: number, pri: number, nowMs: number): SyslogMessage | null {
  const n = s.length;
  let t = NaN;
  const c = s.charCodeAt(i);
  if (isDigit(c)) {
    let e = s.indexOf(" ", i);
    if (e < 0) e = n;
    t = parseIso(s, i, e, false);
    if (!Number.isNaN(t)) i = e + 1;
  } else {
    t = readBsdTime(s, i, nowMs, false);
    if (!Number.isNaN(t)) {
      if (bsdEnd < n && s.charCodeAt(bsdEnd) !== SP) t = NaN;
      else i = bsdEnd + 1;
    }
  }
  if (Number.isNaN(t)) {
    const m = readTag(s, i);
    if (m < 0) return null;
    return newMessage("rfc3164", pri, null, null, tagApp, tagPid, null, [], messageFrom(s, m), null);
  }
  const timestamp = isoText(t);
  if (i >= n) return newMessage("rfc3164", pri, timestamp, null, null, null, null, [], "", null);
  // The word after the time is the host, unless it already looks like a tag ("sshd[12]:", "kernel:").
  let host: string | null = null;
  let e = s.indexOf(" ", i);
  if (e < 0) e = n;
  const last = s.charCodeAt(e - 1);
  if (e > i && last !== COLON && !hasBracket(s, i, e)) {
    host = s.slice(i, e);
    i = e + 1;
  }
  if (i >= n) return newMessage("rfc3164", pri, timestamp, host, null, null, null, [], "", null);
  const cisco = parseCisco(s, i, pri, nowMs, host, timestamp);
  if (cisco !== null) return cisco;
  const m = readTag(s, i);
  if (m < 0) return newMessage("rfc3164", pri, timestamp, host, null, null, null, [], messageFrom(s, i), null);
  return newMessage("rfc3164", pri, timestamp, host, tagApp, tagPid, null, [], messageFrom(s, m), null);
}

function hasBracket(s: string, i: number, e: number): boolean {
  for (let k = i; k < e; k++) if (s.charCodeAt(k) === LBRACKET) return true;
  return false;
}

/** The last readTag() result (module scratch). */
let tagApp: string | null = null;
let tagPid: string | null = null;

/** Reads "TAG:" or "TAG[pid]:" (colon optional after "]") at `i`; returns where the message starts, or -1 when there is no tag. */
function readTag(s: string, i: number): number {
  const n = s.length;
  let j = i;
  let c = 0;
  while (j < n) {
    c = s.charCodeAt(j);
    if (c === COLON || c === LBRACKET) break;
    if (c === SP || j - i >= 48) return -1;
    j++;
  }
  if (j === i || j >= n) return -1;
  tagApp = s.slice(i, j);
  tagPid = null;
  if (c === LBRACKET) {
    const k = s.indexOf("]", j);
    if (k < 0 || k - j > 129) return -1;
    tagPid = k > j + 1 ? s.slice(j + 1, k) : null;
    j = k + 1;
    if (j < n && s.charCodeAt(j) === COLON) j++;
    else if (j < n && s.charCodeAt(j) !== SP) return -1;
  } else j++;
  if (j < n && s.charCodeAt(j) === SP) j++;
  return j;
}
