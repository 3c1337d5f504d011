/**
 * A local Table-API-style incident service (the protocol of ServiceNow's Table API) on 127.0.0.1 and a free port, for
 * the `servicedesk` channel kind's tests. Basic authentication with one user; one or more tables (default `incident`).
 *
 *   POST  /api/now/table/<table>              JSON fields → 201 {result: record}
 *   GET   /api/now/table/<table>?sysparm_query=a=b^c=d&sysparm_limit=N  → 200 {result: [records]} (terms joined by `^`,
 *                                             `field=value` only, `ORDERBY…` terms ignored; `active` is derived)
 *   GET   /api/now/table/<table>/<sys_id>     → 200 {result: record} | 404
 *   PATCH /api/now/table/<table>/<sys_id>     JSON fields → 200 {result: record} | 404 (PUT the same)
 *   `sysparm_fields=a,b` limits the fields answered.
 *   Errors: 401 (no or wrong credentials), 400 (unknown table, a body that is not a JSON object), 404, each as
 *   {error: {message, detail}, status: "failure"}.
 *
 * A record: sys_id (32 hex), number (INC0010001, …), state ("1" New … "6" Resolved, "7" Closed, "8" Canceled), active
 * ("true" unless resolved, closed or canceled), the fields written, and `work_notes_log` (each work note written).
 * Every request is recorded in `requests`. `next(...)` queues one-shot misbehaviours as the pager server's do:
 * {status, retryAfter?}, {delayMs}, {drop: true}.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Misbehaviour } from "./pagerServer.js";

export type { Misbehaviour } from "./pagerServer.js";

export interface RecordedTableRequest {
  method: string;
  /** The path without the query. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export type TableRecord = Record<string, unknown> & { sys_id: string; number: string; state: string; active: string; work_notes_log: string[] };

export interface ServicedeskServer {
  /** Base URL (the instance), e.g. http://127.0.0.1:41234 */
  url: string;
  requests: RecordedTableRequest[];
  /** Records by sys_id, per table. */
  tables: Map<string, Map<string, TableRecord>>;
  /** The records of `incident` (or the given table), oldest first. */
  records(table?: string): TableRecord[];
  next(...m: Misbehaviour[]): void;
  close(): Promise<void>;
}

export interface ServicedeskServerOptions {
  username: string;
  password: string;
  tables?: readonly string[];
}

const INACTIVE_STATES = new Set(["6", "7", "8"]);
const READ_ONLY = new Set(["sys_id", "number", "active", "sys_created_on", "sys_updated_on", "work_notes_log"]);

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json;charset=UTF-8", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function failure(res: ServerResponse, status: number, message: string, detail: string | null = null, headers: Record<string, string> = {}): void {
  answer(res, status, { error: { message, detail }, status: "failure" }, headers);
}

function pick(rec: TableRecord, fields: string | undefined): Record<string, unknown> {
  if (!fields) return rec;
  return Object.fromEntries(fields.split(",").map((f) => [f.trim(), rec[f.trim()] ?? ""]));
}

/** Writes fields onto a record as the Table API does: values become strings, a work note is appended to the journal. */
function write(rec: TableRecord, fields: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(fields)) {
    if (READ_ONLY.has(k)) continue;
    if (k === "work_notes") {
      if (v !== null && v !== "") rec.work_notes_log.push(String(v));
      continue;
    }
    rec[k] = v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
  }
  rec.active = INACTIVE_STATES.has(rec.state) ? "false" : "true";
  rec.sys_updated_on = new Date().toISOString();
}

/** An encoded query's `field=value` terms (`^` joins them; ORDERBY terms are ignored). */
function matches(rec: TableRecord, query: string | undefined): boolean {
  if (!query) return true;
  for (const term of query.split("^")) {
    if (term === "" || term.startsWith("ORDERBY")) continue;
    const eq = term.indexOf("=");
    if (eq < 0) return false;
    if (String(rec[term.slice(0, eq)] ?? "") !== term.slice(eq + 1)) return false;
  }
  return true;
}

export async function startServicedeskServer(options: ServicedeskServerOptions): Promise<ServicedeskServer> {
  const expected = `Basic ${Buffer.from(`${options.username}:${options.password}`, "utf8").toString("base64")}`;
  const tables = new Map<string, Map<string, TableRecord>>((options.tables ?? ["incident"]).map((t) => [t, new Map()]));
  const requests: RecordedTableRequest[] = [];
  const queue: Misbehaviour[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let counter = 10000;

  function table(req: IncomingMessage, res: ServerResponse, r: RecordedTableRequest): void {
    if (req.headers.authorization !== expected)
      return failure(res, 401, "User Not Authenticated", "Required to provide Auth information", { "www-authenticate": 'Basic realm="Service-now"' });
    const m = /^\/api\/now\/table\/([^/]+)(?:\/([^/]+))?$/.exec(r.path);
    if (!m) return failure(res, 400, "Requested URI does not represent any resource", r.path);
    const name = decodeURIComponent(m[1]!);
    const rows = tables.get(name);
    if (!rows) return failure(res, 400, "Invalid table " + name);
    const sysId = m[2] === undefined ? null : decodeURIComponent(m[2]);
    const fields = r.query.sysparm_fields;
    const needsBody = req.method === "POST" || req.method === "PATCH" || req.method === "PUT";
    if (needsBody && (!r.body || typeof r.body !== "object" || Array.isArray(r.body)))
      return failure(res, 400, "Exception while reading request", "The payload is not valid JSON.");
    if (sysId === null) {
      if (req.method === "GET") {
        const limit = r.query.sysparm_limit ? Number(r.query.sysparm_limit) : Infinity;
        const found = [...rows.values()]
          .filter((rec) => matches(rec, r.query.sysparm_query))
          .reverse()
          .slice(0, limit);
        return answer(res, 200, { result: found.map((rec) => pick(rec, fields)) });
      }
      if (req.method === "POST") {
        counter += 1;
        const now = new Date().toISOString();
        const rec: TableRecord = {
          sys_id: randomBytes(16).toString("hex"),
          number: `INC${String(counter).padStart(7, "0")}`,
          state: "1",
          active: "true",
          sys_created_on: now,
          work_notes_log: [],
        };
        write(rec, r.body as Record<string, unknown>);
        rows.set(rec.sys_id, rec);
        return answer(res, 201, { result: pick(rec, fields) }, { location: `/api/now/table/${name}/${rec.sys_id}` });
      }
      return failure(res, 405, "Method not Supported", `${req.method} is not supported on a table`);
    }
    const rec = rows.get(sysId);
    if (!rec) return failure(res, 404, "No Record found", "Record doesn't exist or ACL restricts the record retrieval");
    if (req.method === "GET") return answer(res, 200, { result: pick(rec, fields) });
    if (req.method === "PATCH" || req.method === "PUT") {
      write(rec, r.body as Record<string, unknown>);
      return answer(res, 200, { result: pick(rec, fields) });
    }
    return failure(res, 405, "Method not Supported", `${req.method} is not supported on a record`);
  }

  function handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const u = new URL(req.url ?? "/", "http://localhost");
    let body: unknown = raw === "" ? undefined : raw;
    try {
      if (raw !== "") body = JSON.parse(raw);
    } catch {
      // kept as text
    }
    const r: RecordedTableRequest = {
      method: req.method ?? "",
      path: u.pathname,
      query: Object.fromEntries(u.searchParams),
      headers: { ...req.headers },
      body,
    };
    requests.push(r);
    const m = queue.shift();
    if (m && "drop" in m) {
      req.socket.destroy();
      return;
    }
    if (m && "status" in m) {
      answer(
        res,
        m.status,
        m.body ?? { error: { message: `status ${m.status}`, detail: null }, status: "failure" },
        m.retryAfter === undefined ? {} : { "retry-after": m.retryAfter },
      );
      return;
    }
    if (m && "delayMs" in m) {
      const t = setTimeout(() => {
        timers.delete(t);
        table(req, res, r); // applied even when the client has gone: its answer is what is lost
      }, m.delayMs);
      timers.add(t);
      return;
    }
    table(req, res, r);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    tables,
    records: (t = "incident") => [...(tables.get(t)?.values() ?? [])],
    next: (...m) => void queue.push(...m),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
