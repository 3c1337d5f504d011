import { Inject, Injectable } from "@tsed/di";
import { badRequest, conflict, decodeCursor, isPgError, isUuid, notFound, page, PG_ERROR } from "../../../core/index.js";
import { FORWARDING_CONTEXT, type ForwardingContext } from "../context.js";
import { runnable } from "../lib/runtime.js";
import { DEST_KINDS, SOURCE_KINDS, type DestKind, type Filter, type PoolDestinationWire, type RuntimeDestination } from "../lib/types.js";
import { checkCaCert, checkCommunity, checkFilter, checkKindPair, checkPool, checkRateLimit, checkServiceAccount, parseTarget } from "../lib/validate.js";
import type { DestinationBody, DestinationView, ForwardDestinationRecord } from "../models/DestinationModels.js";
import { DestinationRepository, type DestinationRow, type DestinationWrite } from "../repositories/DestinationRepository.js";

const nameTaken = () => conflict("name_taken", "A forwarding destination with this name already exists (names are compared case-insensitively).");
const noDestination = () => notFound("No such forwarding destination.");

/** What changed, for the tee (which rebuilds that destination's sender). */
export interface DestinationChange {
  id: string;
  change: "created" | "updated" | "deleted";
}
export type DestinationListener = (change: DestinationChange) => void;

/** Why a bundle record (untrusted JSON) does not have the destination body's shape, or null: the checks the body model makes on the API. */
function recordProblem(r: unknown): string | null {
  if (typeof r !== "object" || r === null || Array.isArray(r)) return "is not an object";
  const o = r as Record<string, unknown>;
  const optional = (v: unknown, type: string) => v === undefined || v === null || typeof v === type;
  if (!isUuid(o.id)) return "needs a uuid id";
  if (typeof o.name !== "string" || o.name.length < 1 || o.name.length > 120) return "needs a name of 1 to 120 characters";
  if (!(DEST_KINDS as readonly unknown[]).includes(o.dest_kind)) return `needs a dest_kind of ${DEST_KINDS.join(", ")}`;
  if (!(SOURCE_KINDS as readonly unknown[]).includes(o.source_kind)) return `needs a source_kind of ${SOURCE_KINDS.join(", ")}`;
  if (typeof o.target !== "string" || o.target === "") return "needs a target";
  for (const f of ["enabled", "verbatim", "had_secret"]) if (!optional(o[f], "boolean")) return `has a ${f} that is not a boolean`;
  for (const f of ["pool", "ca_cert"]) if (!optional(o[f], "string")) return `has a ${f} that is not a string`;
  if (!optional(o.rate_limit_per_sec, "number")) return "has a rate_limit_per_sec that is not a number";
  if (!optional(o.filter, "object")) return "has a filter that is not an object";
  return null;
}

/** The secret a kind uses, if any. */
const SECRET_OF: Partial<Record<DestKind, "community" | "service_account_json">> = { snmp_trap_udp: "community", warehouse: "service_account_json" };

/**
 * Forwarding destinations: the edge validation (lib/validate.ts), secrets sealed apart and never answered, the
 * destination cap, the bundle's records, and the runtime view the tee sends with.
 */
@Injectable()
export class DestinationService {
  @Inject(FORWARDING_CONTEXT)
  private ctx: ForwardingContext;

  @Inject(DestinationRepository)
  private repo: DestinationRepository;

  private readonly listeners = new Set<DestinationListener>();

  /** Calls `listener` after every write (create, update, delete, import) on this replica; returns the unsubscribe. */
  onChange(listener: DestinationListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  view(row: DestinationRow): DestinationView {
    return {
      id: row.id,
      name: row.name,
      dest_kind: row.dest_kind,
      source_kind: row.source_kind,
      target: row.target,
      enabled: row.enabled,
      pool: row.pool,
      rate_limit_per_sec: row.rate_limit_per_sec,
      verbatim: row.verbatim,
      ca_cert: row.ca_cert,
      filter: row.filter,
      has_community: row.community !== null,
      has_service_account: row.service_account_json !== null,
      ambient_identity: row.dest_kind === "warehouse" && row.service_account_json === null && row.disabled_reason === null,
      disabled_reason: row.disabled_reason,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  /** Checks a body as a create would (every 400), writing nothing. */
  check(body: DestinationBody): void {
    this.write(body, null);
  }

  async create(body: DestinationBody): Promise<string> {
    const id = await this.insert(this.write(body, null));
    this.emit({ id, change: "created" });
    return id;
  }

  async list(limit: number, cursor?: string): Promise<{ rows: DestinationView[]; next: string | null }> {
    const after = cursor ? (decodeCursor(cursor, 2, ([, id]) => isUuid(id)) as [string, string]) : null;
    const { rows, next } = page(await this.repo.list(limit, after), limit, (r) => [r.name.toLowerCase(), r.id]);
    return { rows: rows.map((r) => this.view(r)), next };
  }

  async get(id: string): Promise<DestinationView> {
    return this.view(await this.row(id));
  }

  /**
   * The spec's PUT: the whole body replaces the destination. An omitted secret keeps the stored one (while the kind
   * still uses it), null clears it. A destination imported without its secret stays disabled until the secret is set.
   */
  async replace(id: string, body: DestinationBody): Promise<DestinationView> {
    const row = await this.row(id);
    const write = this.write(body, row);
    try {
      if (!(await this.repo.update(id, write))) throw noDestination();
    } catch (err) {
      if (isPgError(err, PG_ERROR.uniqueViolation)) throw nameTaken();
      throw err;
    }
    this.emit({ id, change: "updated" });
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    if (!isUuid(id) || !(await this.repo.remove(id))) throw noDestination();
    this.emit({ id, change: "deleted" });
  }

  async row(id: string): Promise<DestinationRow> {
    const row = isUuid(id) ? await this.repo.get(id) : null;
    if (!row) throw noDestination();
    return row;
  }

  /** The bundle's `forward_destination` records: the body without secrets, plus id and `had_secret`. */
  async bundle(): Promise<ForwardDestinationRecord[]> {
    return (await this.repo.all()).map((r) => ({
      id: r.id,
      name: r.name,
      dest_kind: r.dest_kind,
      source_kind: r.source_kind,
      target: r.target,
      enabled: r.enabled,
      pool: r.pool,
      rate_limit_per_sec: r.rate_limit_per_sec,
      verbatim: r.verbatim,
      ca_cert: r.ca_cert,
      filter: r.filter,
      // A destination still waiting for its secret had one too: a second export keeps saying so.
      had_secret: r.community !== null || r.service_account_json !== null || r.disabled_reason === "secret_missing",
    }));
  }

  /**
   * Imports one bundle record (the same checks as a create, the id kept). When the id exists here already it is
   * replaced and its stored secrets are kept, so it is not disabled. Otherwise a record that `had_secret` arrives
   * disabled (`disabled_reason` secret_missing; the spec's state-table rule and the bundle note
   * `secret_dropped_imported_disabled`) until someone sets the secret with PUT.
   */
  async importRow(record: ForwardDestinationRecord): Promise<{ id: string; disabled_for_secret: boolean }> {
    const problem = recordProblem(record);
    if (problem) throw badRequest("validation_failed", `A forward_destination record ${problem}.`);
    const { had_secret: hadSecret, id, ...body } = record;
    const existing = await this.repo.get(id);
    const write = this.write(body, existing);
    const secretKind = SECRET_OF[write.dest_kind];
    const missing = hadSecret && secretKind !== undefined && write[secretKind] === null;
    if (missing) Object.assign(write, { enabled: false, disabled_reason: "secret_missing" });
    if (existing) {
      try {
        await this.repo.update(id, write);
      } catch (err) {
        if (isPgError(err, PG_ERROR.uniqueViolation)) throw nameTaken();
        throw err;
      }
    } else await this.insert(write, id);
    this.emit({ id, change: existing ? "updated" : "created" });
    return { id, disabled_for_secret: missing };
  }

  /**
   * The enabled destinations as the tee runs them: secrets unsealed, target split, filter compiled, `version` its
   * updated_at. A row that cannot be made runnable (a secret sealed with another key) is left out with a warning that
   * names the destination and never the secret.
   */
  async runtimeDestinations(): Promise<RuntimeDestination[]> {
    const out: RuntimeDestination[] = [];
    for (const r of await this.repo.enabled()) {
      try {
        out.push(runnable(wireOf(r), this.ctx.secrets));
      } catch (err) {
        this.ctx.log.warn("forwarding destination left out: it cannot be run as stored", { destination: r.id, name: r.name, reason: (err as Error).name });
      }
    }
    return out;
  }

  /**
   * The enabled destinations a poller of `pool` tees, as it takes them (secrets still sealed, filters as stored): those
   * of its pool and those without a pool ("every pool"). Each record is teed once, where it was received: the core
   * does not tee what pollers forward to it (POST /events/forwarded and /flow/forwarded do not feed the tee).
   */
  async poolDestinations(pool: string): Promise<PoolDestinationWire[]> {
    return (await this.repo.enabled()).filter((r) => r.pool === null || r.pool === pool).map(wireOf);
  }

  /** Checks a body and turns it into a row: secrets sealed, an omitted secret kept from `stored` while its kind uses it. */
  private write(body: DestinationBody, stored: DestinationRow | null): DestinationWrite {
    const name = body.name.trim();
    if (!name) throw badRequest("validation_failed", "name must not be blank.");
    parseTarget(body.target);
    checkKindPair(body.dest_kind, body.source_kind);
    checkPool(body.pool);
    checkRateLimit(body.rate_limit_per_sec);
    checkFilter(body.filter as Filter | null | undefined);
    const caCert = checkCaCert(body.ca_cert, body.dest_kind);
    checkCommunity(body.community, body.dest_kind);
    checkServiceAccount(body.service_account_json, body.dest_kind);

    const secretKind = SECRET_OF[body.dest_kind];
    const secret = (field: "community" | "service_account_json"): string | null => {
      if (secretKind !== field) return null;
      const given = body[field];
      if (given === undefined) return stored?.[field] ?? null;
      return given === null ? null : this.ctx.secrets.seal(given);
    };
    // Still waiting for the secret an import dropped: only setting it (or null: no secret, on purpose) ends the wait.
    const stillMissing = stored?.disabled_reason === "secret_missing" && secretKind !== undefined && body[secretKind] === undefined;
    // Checked above: mode, fields and operators are the vocabulary's.
    const filter = body.filter
      ? ({ mode: body.filter.mode ?? "all", conditions: (body.filter.conditions ?? []).map(({ field, op, value }) => ({ field, op, value })) } as Filter)
      : null;
    return {
      name,
      dest_kind: body.dest_kind,
      source_kind: body.source_kind,
      target: body.target,
      enabled: stillMissing ? false : (body.enabled ?? true),
      pool: body.pool ?? null,
      rate_limit_per_sec: body.rate_limit_per_sec ?? null,
      verbatim: body.verbatim ?? true,
      ca_cert: caCert,
      community: secret("community"),
      service_account_json: secret("service_account_json"),
      filter,
      disabled_reason: stillMissing ? "secret_missing" : null,
    };
  }

  private async insert(write: DestinationWrite, id?: string): Promise<string> {
    const max = this.ctx.config.maxDestinations;
    let created: string | null;
    try {
      created = await this.repo.insertCapped(write, max, id);
    } catch (err) {
      if (isPgError(err, PG_ERROR.uniqueViolation)) throw nameTaken();
      throw err;
    }
    if (created === null)
      throw badRequest("too_many_destinations", `This deployment keeps at most ${max} forwarding destinations (pluginConfig.forwarding.maxDestinations).`);
    return created;
  }

  private emit(change: DestinationChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.ctx.log.warn("forwarding destination listener failed", { destination: change.id, reason: (err as Error).message });
      }
    }
  }
}

/** A stored row as the tee's source takes it: the target split, secrets still sealed, the filter as stored. */
function wireOf(r: DestinationRow): PoolDestinationWire {
  const { host, port } = parseTarget(r.target);
  return {
    id: r.id,
    name: r.name,
    dest_kind: r.dest_kind,
    source_kind: r.source_kind,
    host,
    port,
    pool: r.pool,
    rate_limit_per_sec: r.rate_limit_per_sec,
    verbatim: r.verbatim,
    ca_cert: r.ca_cert,
    community_sealed: r.community,
    service_account_sealed: r.service_account_json,
    filter: r.filter,
    version: r.updated_at,
  };
}
