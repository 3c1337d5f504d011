/**
 * `servicedesk`: a Table-API-style incident service (the shape of ServiceNow's Table API, `/api/now/table/<table>`),
 * with Basic authentication.
 *
 * - fire → looks for an open record of this incident (`correlation_id` = the alert's incident key, see
 *   {@link correlationId}, and `active=true`);
 *   none → `POST /api/now/table/<table>` {short_description, description, urgency, impact, correlation_id,
 *   correlation_display, caller_id, assignment_group} (201 `{result: {sys_id, number}}`); one found (a repeat after a
 *   lost answer, or a second fire of the same incident) → `PATCH` its urgency, impact and short description and add the
 *   body as a work note, so one alert incident is one record however often it is delivered. Either way the outcome's
 *   `incidentRef` is the record's `sys_id`. The Table API has no idempotency keys of its own; `X-NMS-Idempotency-Key`
 *   is sent for proxies and logs that use it.
 * - resolve → `PATCH /api/now/table/<table>/<incidentRef>` {state: "6" (Resolved), close_code: "Resolved by caller",
 *   close_notes: body}. Without an `incidentRef` (or when that record is gone: 404) the open record is looked up by
 *   `correlation_id`; none → delivered, there is nothing to resolve.
 * - suppress → nothing is sent (`{ status: null }`): a muted or in-maintenance alert does not touch the ticket.
 * - urgency and impact: critical 1 (High), warning 2 (Medium), info 3 (Low).
 * - 408, 429 and 5xx are retryable (with `Retry-After`); 400, 401, 403, 404 end the delivery. Errors never name the URL,
 *   the user or the password.
 */
import { createHash } from "node:crypto";
import { request } from "undici";
import type { ChannelForSend, ChannelKind, OutboundNotification, SendOutcome } from "../contract.js";
import { DeliveryError } from "../contract.js";
import { namedTextTemplates } from "../lib/builtinTemplates.js";
import { checkHttpUrl, headerValue, httpFailure, networkFailure, sendSignal } from "./http.js";

/** The incident states of the Table API's `incident` table that this kind writes. */
export const SERVICEDESK_RESOLVED_STATE = "6";
export const SERVICEDESK_CLOSE_CODE = "Resolved by caller";

const LEVEL: Record<string, "1" | "2" | "3"> = { critical: "1", warning: "2", info: "3" };
/** The most of an answer's body read (a record is a few KiB; a list is asked for one row and two fields). */
const MAX_ANSWER_BYTES = 1 << 20;

/** ServiceNow's `correlation_id` holds 100 characters. */
const CORRELATION_MAX = 100;

/**
 * The record's `correlation_id` for an incident key: the key itself, with any `^` (the encoded query's separator,
 * which the lookup could not carry) made `_`; a key longer than the column keeps its first 59 characters and adds
 * `~` and 40 hex digits of its SHA-256, so written and looked-up values always match.
 */
export function correlationId(dedupKey: string): string {
  const key = dedupKey.replace(/\^/g, "_");
  if (key.length <= CORRELATION_MAX) return key;
  return `${key.slice(0, CORRELATION_MAX - 41)}~${createHash("sha256").update(dedupKey).digest("hex").slice(0, 40)}`;
}

interface Call {
  method: "GET" | "POST" | "PATCH";
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

interface Answer {
  status: number;
  json: unknown;
}

class TableClient {
  private readonly base: string;
  private readonly auth: string;

  constructor(
    private readonly config: Record<string, unknown>,
    private readonly n: OutboundNotification,
    private readonly deadline: { signal: AbortSignal; timedOut: () => boolean },
  ) {
    this.base = String(config.url).replace(/\/+$/, "");
    this.auth = `Basic ${Buffer.from(`${String(config.username)}:${String(config.password ?? "")}`, "utf8").toString("base64")}`;
  }

  get table(): string {
    return encodeURIComponent(typeof this.config.table === "string" ? this.config.table : "incident");
  }

  /** One call; a 2xx answer's JSON, a 404 as `{status: 404}` when `allow404`, any other status a DeliveryError. */
  async call(c: Call, allow404 = false): Promise<Answer> {
    const url = new URL(`${this.base}${c.path}`);
    for (const [k, v] of Object.entries(c.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = { accept: "application/json", authorization: this.auth, "x-nms-idempotency-key": this.n.idempotencyKey };
    if (c.body !== undefined) headers["content-type"] = "application/json";
    let res;
    try {
      res = await request(url, { method: c.method, headers, body: c.body === undefined ? undefined : JSON.stringify(c.body), signal: this.deadline.signal });
    } catch (err) {
      throw networkFailure(err, this.deadline.timedOut());
    }
    if (res.statusCode < 200 || res.statusCode > 299) {
      await res.body.dump().catch(() => undefined);
      if (res.statusCode === 404 && allow404) return { status: 404, json: null };
      throw httpFailure(res.statusCode, headerValue(res.headers, "retry-after"));
    }
    let text: string;
    try {
      text = await readCapped(res.body);
    } catch (err) {
      throw networkFailure(err, this.deadline.timedOut());
    }
    let json: unknown = null;
    try {
      json = text === "" ? null : JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.statusCode, json };
  }

  /** The sys_id of this incident's open record, or null. */
  async findOpen(): Promise<{ status: number; sysId: string | null }> {
    const a = await this.call({
      method: "GET",
      path: `/api/now/table/${this.table}`,
      query: {
        sysparm_query: `correlation_id=${correlationId(this.n.dedupKey)}^active=true^ORDERBYDESCsys_created_on`,
        sysparm_limit: "1",
        sysparm_fields: "sys_id,number",
      },
    });
    const rows = (a.json as { result?: unknown } | null)?.result;
    if (!Array.isArray(rows)) throw unexpected(a.status, "no result list");
    const sysId = (rows[0] as { sys_id?: unknown } | undefined)?.sys_id;
    return { status: a.status, sysId: typeof sysId === "string" && sysId !== "" ? sysId : null };
  }
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw new DeliveryError("answer too large", "protocol", { retryable: false, status: null });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function unexpected(status: number, what: string): DeliveryError {
  return new DeliveryError(`HTTP ${status} with an unexpected answer (${what})`, "protocol", { retryable: false, status });
}

function recordFields(n: OutboundNotification, config: Record<string, unknown>): Record<string, unknown> {
  const level = LEVEL[n.alert.severity] ?? "2";
  const fields: Record<string, unknown> = {
    short_description: n.subject.slice(0, 160),
    description: n.body ?? n.subject,
    urgency: level,
    impact: level,
    correlation_id: correlationId(n.dedupKey),
    correlation_display: "nms-core",
  };
  if (typeof config.caller === "string") fields.caller_id = config.caller;
  if (typeof config.assignment_group === "string") fields.assignment_group = config.assignment_group;
  return fields;
}

async function fire(client: TableClient, n: OutboundNotification, config: Record<string, unknown>): Promise<SendOutcome> {
  const fields = recordFields(n, config);
  const open = await client.findOpen();
  if (open.sysId) {
    const a = await client.call({
      method: "PATCH",
      path: `/api/now/table/${client.table}/${encodeURIComponent(open.sysId)}`,
      query: { sysparm_fields: "sys_id,number" },
      body: { short_description: fields.short_description, urgency: fields.urgency, impact: fields.impact, work_notes: fields.description },
    });
    return { status: a.status, incidentRef: open.sysId };
  }
  const a = await client.call({ method: "POST", path: `/api/now/table/${client.table}`, query: { sysparm_fields: "sys_id,number" }, body: fields });
  const sysId = (a.json as { result?: { sys_id?: unknown } } | null)?.result?.sys_id;
  if (typeof sysId !== "string" || sysId === "") throw unexpected(a.status, "no result.sys_id");
  return { status: a.status, incidentRef: sysId };
}

async function resolve(client: TableClient, n: OutboundNotification): Promise<SendOutcome> {
  const close = { state: SERVICEDESK_RESOLVED_STATE, close_code: SERVICEDESK_CLOSE_CODE, close_notes: n.body ?? n.subject };
  const patch = (sysId: string) =>
    client.call(
      { method: "PATCH", path: `/api/now/table/${client.table}/${encodeURIComponent(sysId)}`, query: { sysparm_fields: "sys_id,number,state" }, body: close },
      true,
    );
  if (n.incidentRef) {
    const a = await patch(n.incidentRef);
    if (a.status !== 404) return { status: a.status, incidentRef: n.incidentRef };
  }
  const open = await client.findOpen();
  if (!open.sysId) return { status: open.status };
  const a = await patch(open.sysId);
  if (a.status === 404) return { status: 404 };
  return { status: a.status, incidentRef: open.sysId };
}

export const servicedeskKind: ChannelKind = {
  kind: "servicedesk",
  description: "Open and resolve incidents through a Table-API-style service (ServiceNow Table API), correlated by incident key",
  configSchema: {
    type: "object",
    additionalProperties: false,
    required: ["url", "username", "password"],
    properties: {
      url: { type: "string", pattern: "^https?://[^\\s]+$", maxLength: 2048, description: "The instance's base URL, e.g. https://example.service-now.com" },
      table: { type: "string", pattern: "^[a-z][a-z0-9_]{0,79}$", default: "incident" },
      username: { type: "string", minLength: 1, maxLength: 255, pattern: "^[^:]+$" },
      password: { type: "string", minLength: 1, maxLength: 4096, description: "(secret)" },
      caller: { type: ["string", "null"], minLength: 1, maxLength: 255, default: null, description: "caller_id: a user's sys_id or name" },
      assignment_group: { type: ["string", "null"], minLength: 1, maxLength: 255, default: null, description: "a group's sys_id or name" },
      timeout_ms: { type: "integer", minimum: 1000, maximum: 60000, default: 10000 },
    },
  },
  secretFields: ["password"],
  validate(config) {
    const url = checkHttpUrl(config.url, " (use username and password)");
    if (url.search || url.hash) throw new Error("config.url must be the instance's base URL, without a query.");
  },
  opensIncidents: true,
  builtinTemplates: namedTextTemplates(),
  async send(n: OutboundNotification, channel: ChannelForSend, signal: AbortSignal): Promise<SendOutcome> {
    if (n.event === "suppress") return { status: null };
    const deadline = sendSignal(signal, typeof channel.config.timeout_ms === "number" ? channel.config.timeout_ms : 10000);
    const client = new TableClient(channel.config, n, deadline);
    return n.event === "fire" ? fire(client, n, channel.config) : resolve(client, n);
  },
};
