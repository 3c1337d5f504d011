/**
 * A local Events-API-v2-style paging service (the protocol of PagerDuty's Events API v2) on 127.0.0.1 and a free port,
 * for the `pager` channel kind's tests.
 *
 *   POST /v2/enqueue   JSON {routing_key, event_action: trigger|acknowledge|resolve, dedup_key?, payload?}
 *                      202 {status: "success", message: "Event processed", dedup_key}
 *                      400 {status: "invalid event", message: "Event object is invalid", errors: [...]}, also for a
 *                      routing key the server does not know
 *   anything else      404
 *
 * Incidents are kept by dedup key: a trigger opens one (or re-opens a resolved one, as a new incident would be),
 * acknowledge and resolve change an open one's status; a resolve of an unknown key is accepted and ignored. Every
 * request is recorded in `requests` (with its parsed body), whatever was answered.
 *
 * `next(...)` queues one-shot misbehaviours, used by the following requests in order:
 *   {status: 429, retryAfter: "7"}   that status (any), with a Retry-After header when given
 *   {delayMs: 3000}                   answer normally, but only after that long (the event is applied even when
 *                                     the client gave up meanwhile: its answer is what is lost)
 *   {drop: true}                      read the request, then destroy the socket without answering
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Misbehaviour = { status: number; retryAfter?: string; body?: unknown } | { delayMs: number } | { drop: true };

export interface RecordedEvent {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
}

export interface PagerIncident {
  dedupKey: string;
  status: "triggered" | "acknowledged" | "resolved";
  summary: string;
  source: string;
  severity: string;
  customDetails: unknown;
  /** Every event applied to it, in order. */
  actions: string[];
}

export interface PagerServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  /** The events endpoint: `${url}/v2/enqueue`. */
  enqueueUrl: string;
  requests: RecordedEvent[];
  incidents: Map<string, PagerIncident>;
  next(...m: Misbehaviour[]): void;
  close(): Promise<void>;
}

const SEVERITIES = new Set(["critical", "error", "warning", "info"]);
const ACTIONS = new Set(["trigger", "acknowledge", "resolve"]);

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function invalid(res: ServerResponse, errors: string[]): void {
  answer(res, 400, { status: "invalid event", message: "Event object is invalid", errors });
}

/** The Events API's checks of one event; the error list is empty when it is valid. */
function check(e: Record<string, unknown>, keys: ReadonlySet<string>): string[] {
  const errors: string[] = [];
  if (typeof e.routing_key !== "string" || !keys.has(e.routing_key)) errors.push("Invalid routing key");
  if (typeof e.event_action !== "string" || !ACTIONS.has(e.event_action)) errors.push("'event_action' is invalid");
  if (e.dedup_key !== undefined && (typeof e.dedup_key !== "string" || e.dedup_key.length > 255)) errors.push("'dedup_key' is invalid");
  if (e.event_action !== "trigger" && typeof e.dedup_key !== "string") errors.push("'dedup_key' is missing");
  if (e.event_action === "trigger") {
    const p = e.payload as Record<string, unknown> | undefined;
    if (!p || typeof p !== "object") errors.push("'payload' is missing or invalid");
    else {
      if (typeof p.summary !== "string" || p.summary === "" || p.summary.length > 1024) errors.push("'payload.summary' is missing or invalid");
      if (typeof p.source !== "string" || p.source === "") errors.push("'payload.source' is missing or invalid");
      if (typeof p.severity !== "string" || !SEVERITIES.has(p.severity)) errors.push("'payload.severity' is missing or invalid");
      if (p.timestamp !== undefined && (typeof p.timestamp !== "string" || Number.isNaN(Date.parse(p.timestamp))))
        errors.push("'payload.timestamp' is invalid");
    }
  }
  return errors;
}

/** Starts the server; `routingKeys` are the integrations it knows. */
export async function startPagerServer(routingKeys: readonly string[]): Promise<PagerServer> {
  const keys = new Set(routingKeys);
  const requests: RecordedEvent[] = [];
  const incidents = new Map<string, PagerIncident>();
  const queue: Misbehaviour[] = [];
  const timers = new Set<NodeJS.Timeout>();

  function handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // kept as text
    }
    requests.push({ method: req.method ?? "", path: req.url ?? "", headers: { ...req.headers }, body });
    const m = queue.shift();
    if (m && "drop" in m) {
      req.socket.destroy();
      return;
    }
    if (m && "status" in m) {
      answer(res, m.status, m.body ?? { status: "error", message: `status ${m.status}` }, m.retryAfter === undefined ? {} : { "retry-after": m.retryAfter });
      return;
    }
    const reply = () => enqueue(req, res, body);
    if (m && "delayMs" in m) {
      const t = setTimeout(() => {
        timers.delete(t);
        reply(); // applied even when the client has gone: its answer is what is lost
      }, m.delayMs);
      timers.add(t);
    } else {
      reply();
    }
  }

  function enqueue(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    if (req.method !== "POST" || (req.url ?? "").split("?")[0] !== "/v2/enqueue") return answer(res, 404, { status: "not found" });
    if (!String(req.headers["content-type"] ?? "").startsWith("application/json")) return invalid(res, ["Content-Type must be application/json"]);
    if (!body || typeof body !== "object" || Array.isArray(body)) return invalid(res, ["Event object is not a JSON object"]);
    const e = body as Record<string, unknown>;
    const errors = check(e, keys);
    if (errors.length > 0) return invalid(res, errors);
    const dedupKey = typeof e.dedup_key === "string" ? e.dedup_key : `generated-${requests.length}`;
    const action = e.event_action as string;
    const inc = incidents.get(dedupKey);
    if (action === "trigger") {
      const p = e.payload as Record<string, unknown>;
      const fields = { summary: p.summary as string, source: p.source as string, severity: p.severity as string, customDetails: p.custom_details };
      if (inc && inc.status !== "resolved") Object.assign(inc, fields, { actions: [...inc.actions, action] });
      else incidents.set(dedupKey, { dedupKey, status: "triggered", ...fields, actions: [...(inc?.actions ?? []), action] });
    } else if (inc && inc.status !== "resolved") {
      inc.status = action === "resolve" ? "resolved" : "acknowledged";
      inc.actions.push(action);
    }
    answer(res, 202, { status: "success", message: "Event processed", dedup_key: dedupKey });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    enqueueUrl: `${url}/v2/enqueue`,
    requests,
    incidents,
    next: (...m) => void queue.push(...m),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
