/**
 * The `warehouse` sender: streams rows in batches to a cloud data warehouse's streaming-insert API (BigQuery's
 * `tabledata.insertAll` protocol): `POST https://<target>/bigquery/v2/projects/<project>/datasets/<dataset>/tables/
 * <table>/insertAll` with `{rows: [{insertId, json}]}`, authenticated with a bearer access token got either
 *  - from a service-account key: an RS256-signed JWT (iss = client_email, scope, aud = token_uri) exchanged at the
 *    key's `token_uri` (OAuth 2.0 JWT bearer grant, RFC 7523), or
 *  - from the platform's ambient identity: the instance metadata server's token endpoint (`Metadata-Flavor: Google`).
 *
 * Rows wait in a bounded queue (drop-oldest, counted as `dropped_queue`); one request is in flight at a time; a batch
 * goes when it is full or `flushMs` after its first row. A 429, a 5xx or a network failure keeps the batch and retries
 * it with backoff (same insertIds, so the warehouse de-duplicates), each failed request counted in connection_errors;
 * a 401 drops the token and retries once; another 4xx drops the batch, each of its rows a send error, as is each row
 * the answer's `insertErrors` names. close() counts the rows it leaves queued in dropped_queue. Failures are counted and classed;
 * nothing logged or recorded carries the key, the token or the target's answer.
 */
import { createSign, randomUUID } from "node:crypto";
import { rootCertificates } from "node:tls";
import { Agent, request } from "undici";
import type { DestinationCounters } from "../lib/types.js";
import { errorClass } from "./senders.js";

/** What the sender needs from the plugin config and the destination. */
export interface WarehouseOptions {
  host: string;
  port: number;
  caCert: string | null;
  /** The service-account key file (JSON), or null for the ambient identity. */
  serviceAccountJson: string | null;
  /** Project of the tables: the key's project_id, else this. */
  projectId: string | null;
  dataset: string;
  table: string;
  batchRows: number;
  flushMs: number;
  queueSize: number;
  retryMinMs: number;
  retryMaxMs: number;
  /** Where the ambient identity's access token comes from. */
  metadataTokenUrl: string;
  /** OAuth scope asked for with a key. */
  scope: string;
  timeoutMs?: number;
}

interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
  project_id?: string;
}

interface Token {
  value: string;
  /** Unix ms after which it is fetched again. */
  until: number;
}

/** A failure with a class for the status route (the message is never shown). */
class WarehouseError extends Error {
  constructor(
    readonly code: string,
    readonly retryable: boolean,
  ) {
    super(code);
  }
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

/** An RS256 JWT asking `token_uri` for an access token with `scope` (Google's service-account flow). */
export function serviceAccountAssertion(key: ServiceAccount, scope: string, nowMs = Date.now()): string {
  const iat = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: "RS256", typ: "JWT", ...(key.private_key_id ? { kid: key.private_key_id } : {}) }));
  const claims = b64url(JSON.stringify({ iss: key.client_email, scope, aud: key.token_uri, iat, exp: iat + 3600 }));
  const signature = createSign("RSA-SHA256").update(`${header}.${claims}`).sign(key.private_key);
  return `${header}.${claims}.${b64url(signature)}`;
}

export class WarehouseSender {
  private readonly queue: { insertId: string; json: Record<string, unknown> }[] = [];
  private readonly agent: Agent;
  private readonly key: ServiceAccount | null;
  private token: Token | null = null;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private backoffMs = 0;
  private closed = false;

  constructor(
    private readonly o: WarehouseOptions,
    private readonly counters: DestinationCounters,
  ) {
    this.key = o.serviceAccountJson ? (JSON.parse(o.serviceAccountJson) as ServiceAccount) : null;
    this.agent = new Agent({
      connect: { ca: o.caCert ? [...rootCertificates, o.caCert] : undefined, timeout: o.timeoutMs ?? 10_000 },
      headersTimeout: o.timeoutMs ?? 10_000,
      bodyTimeout: o.timeoutMs ?? 10_000,
    });
    counters.connection = "idle";
  }

  /** Queues one row (never throws, never waits); past the queue size the oldest row is dropped and counted. */
  send(json: Record<string, unknown>): void {
    if (this.closed) return;
    this.queue.push({ insertId: randomUUID(), json });
    if (this.queue.length > this.o.queueSize) {
      this.queue.shift();
      this.counters.dropped_queue++;
    }
    this.counters.queued = this.queue.length;
    if (this.queue.length >= this.o.batchRows) this.kick(0);
    else this.kick(this.o.flushMs);
  }

  /**
   * Sends what is queued (at most a few seconds' wait, and not while backing off), then stops: rows still queued are
   * dropped and counted (dropped_queue).
   */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const deadline = Date.now() + 5000;
    while (!this.closed && this.queue.length > 0 && Date.now() < deadline && this.backoffMs === 0) await this.flush();
    this.closed = true;
    await this.flushing;
    this.counters.dropped_queue += this.queue.length;
    this.queue.length = 0;
    this.counters.queued = 0;
    await this.agent.close();
  }

  private kick(delayMs: number): void {
    if (this.closed || this.flushing || (this.timer && delayMs > 0)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.flush();
      },
      Math.max(delayMs, this.backoffMs),
    );
    this.timer.unref();
  }

  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      try {
        while (this.queue.length > 0 && !this.closed) {
          const batch = this.queue.slice(0, this.o.batchRows);
          try {
            await this.insert(batch);
          } catch (err) {
            const e = err instanceof WarehouseError ? err : new WarehouseError(networkClass(err), true);
            this.counters.connection = "disconnected";
            if (e.retryable) {
              // The rows stay queued for the retry: a failed request, not lost rows.
              countError(this.counters, e.code, 0);
              this.counters.connection_errors++;
              this.backoffMs = Math.min(this.o.retryMaxMs, Math.max(this.o.retryMinMs, this.backoffMs * 2));
              return;
            }
            // Refused for good (4xx): the batch goes, each row counted.
            countError(this.counters, e.code, batch.length);
            this.queue.splice(0, batch.length);
            continue;
          }
          this.backoffMs = 0;
          this.queue.splice(0, batch.length);
        }
      } finally {
        this.counters.queued = this.queue.length;
        this.flushing = null;
        if (this.queue.length > 0 && !this.closed) this.kick(this.backoffMs || this.o.flushMs);
      }
    })();
    return this.flushing;
  }

  /** One insertAll of a batch; resolves when the warehouse took it (rows it refused are counted). */
  private async insert(batch: readonly { insertId: string; json: Record<string, unknown> }[], retried = false): Promise<void> {
    const token = await this.accessToken();
    const project = this.key?.project_id ?? this.o.projectId;
    if (!project) throw new WarehouseError("config", false);
    const path = `/bigquery/v2/projects/${encodeURIComponent(project)}/datasets/${encodeURIComponent(this.o.dataset)}/tables/${encodeURIComponent(this.o.table)}/insertAll`;
    const host = this.o.host.includes(":") && !this.o.host.startsWith("[") ? `[${this.o.host}]` : this.o.host;
    const res = await request(`https://${host}:${this.o.port}${path}`, {
      method: "POST",
      dispatcher: this.agent,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ kind: "bigquery#tableDataInsertAllRequest", skipInvalidRows: true, ignoreUnknownValues: true, rows: batch }),
    });
    const text = await res.body.text();
    if (res.statusCode === 401 && !retried) {
      this.token = null;
      return this.insert(batch, true);
    }
    if (res.statusCode === 429 || res.statusCode >= 500) throw new WarehouseError(res.statusCode === 429 ? "rate_limited" : "server_error", true);
    if (res.statusCode >= 300) throw new WarehouseError(res.statusCode === 401 || res.statusCode === 403 ? "auth" : "rejected", false);
    let refused = 0;
    try {
      const body = JSON.parse(text) as { insertErrors?: { index: number }[] };
      refused = new Set((body.insertErrors ?? []).map((e) => e.index)).size;
    } catch {
      /* a 2xx without a JSON body: every row taken */
    }
    this.counters.forwarded += batch.length - refused;
    if (refused > 0) countError(this.counters, "insert_error", refused);
    this.counters.connection = "connected";
  }

  /** A cached access token, or a new one from the key's token_uri or the metadata server. */
  private async accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.until) return this.token.value;
    const res = this.key
      ? await request(this.key.token_uri, {
          method: "POST",
          dispatcher: this.agent,
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
            assertion: serviceAccountAssertion(this.key, this.o.scope),
          }).toString(),
        })
      : await request(this.o.metadataTokenUrl, { method: "GET", dispatcher: this.agent, headers: { "metadata-flavor": "Google" } });
    const text = await res.body.text();
    if (res.statusCode >= 500 || res.statusCode === 429) throw new WarehouseError("token_unavailable", true);
    if (res.statusCode !== 200) throw new WarehouseError("auth", true);
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new WarehouseError("auth", true);
    }
    if (typeof body.access_token !== "string" || body.access_token === "") throw new WarehouseError("auth", true);
    const ttl = typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : 3600;
    this.token = { value: body.access_token, until: Date.now() + Math.max(0, ttl - 60) * 1000 };
    return this.token.value;
  }
}

/** Counts `n` failed rows under one class (never a message: it could carry the target's answer). */
function countError(counters: DestinationCounters, cls: string, n = 1): void {
  counters.send_errors += n;
  counters.last_error_class = cls;
  counters.last_error_at = new Date().toISOString();
}

/** A network failure's class: undici's timeouts, else the socket error's (connect_refused, reset, tls ...). */
function networkClass(err: unknown): string {
  const code = String((err as { code?: unknown })?.code ?? "");
  if (/TIMEOUT/.test(code)) return "timeout";
  const cause = (err as { cause?: { code?: unknown } })?.cause;
  return errorClass(cause && typeof cause === "object" && "code" in cause ? cause : err);
}
