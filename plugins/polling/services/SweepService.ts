import { Inject, Injectable } from "@tsed/di";
import {
  assertPoolName,
  badRequest,
  type ChannelDeclaration,
  decodeCursor,
  formatIp,
  type IpPrefix,
  isRfc3339,
  isUuid,
  notFound,
  page,
  parseCidr,
  requireCaller,
} from "../../../core/index.js";
// Contract tokens inventory's manifest exports.
import { Classifier, Credentials, InventoryLimits } from "../../inventory/contract.js";
import { snmpGet, SYSTEM_OIDS } from "../checks/SnmpGet.js";
import {
  SWEEP_DEFAULT_PORT,
  SWEEP_DEFAULT_TIMEOUT_MS,
  type SweepCreate,
  type SweepDetail,
  type SweepImportNode,
  type SweepView,
} from "../models/SweepModels.js";
import type { SnmpCredential } from "../poller/types.js";
import { SweepRepository, type SweepFound } from "../repositories/SweepRepository.js";
import { snmpCredentialOf } from "./AssignmentService.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

/** Addresses probed at once by one sweep. */
export const SWEEP_CONCURRENCY = 64;
/** Progress is written and published at most this often (ms). */
export const SWEEP_PROGRESS_MS = 500;
/** A running sweep without progress for this long was cut off by a restart. */
export const SWEEP_STALE_SECS = 600;

// ---- address ranges ---------------------------------------------------------------------------

export interface SweepRange extends IpPrefix {
  /** Normalised "network/prefix". */
  cidr: string;
  /** Addresses a sweep probes (IPv4 wider than /31 skips network and broadcast). */
  count: bigint;
  /** The first address probed. */
  first: bigint;
}

/**
 * A range from "a.b.c.d/n", "x::/n" or a bare address, read by the kernel's prefix parser: host bits
 * set name the network that holds them ("10.0.0.1/24" sweeps 10.0.0.0/24, docs/adr/0007); null when
 * it is not a prefix.
 */
export function parseSweepRange(text: string): SweepRange | null {
  const range = parseCidr(text);
  if (!range) return null;
  const skipEnds = range.family === 4 && range.prefix < 31;
  return {
    ...range,
    cidr: range.text,
    count: skipEnds ? range.size - 2n : range.size,
    first: skipEnds ? range.network + 1n : range.network,
  };
}

function* addressesOf(range: SweepRange): Generator<string> {
  for (let i = 0n; i < range.count; i++) yield formatIp(range.family, range.first + i);
}

/** Settles with the first outcome, in list order, that is a hit, as soon as every earlier one has missed. */
function firstInOrder<T>(attempts: Promise<T | null>[]): Promise<{ index: number; value: T } | null> {
  return new Promise((resolve) => {
    const settled: (T | null | undefined)[] = attempts.map(() => undefined);
    const decide = () => {
      for (let i = 0; i < settled.length; i++) {
        if (settled[i] === undefined) return; // an earlier, preferred credential may still answer
        if (settled[i] !== null) return resolve({ index: i, value: settled[i] as T });
      }
      resolve(null);
    };
    attempts.forEach((a, i) =>
      a.then(
        (v) => {
          settled[i] = v;
          decide();
        },
        () => {
          settled[i] = null;
          decide();
        },
      ),
    );
  });
}

// ---- manifest pieces (declared in index.ts) ---------------------------------------------------

/**
 * The Socket.IO channel `polling.sweeps`: events `polling.sweep.progress` and `polling.sweep.found`.
 * Sweeps need scope All (their credentials do), so the channel is scoped and published without
 * folders: only unrestricted ManageConfig sockets get it.
 */
export const SWEEP_CHANNEL: ChannelDeclaration = {
  name: "sweeps",
  permission: "ManageConfig",
  scoped: true,
  description: "discovery sweep progress (sweep.progress) and devices found (sweep.found)",
};

type Revealed = Awaited<ReturnType<Credentials["reveal"]>>;

interface Candidate {
  id: string;
  cred: SnmpCredential;
}

/**
 * Discovery sweeps: probe every address of a range by SNMP (sysObjectID, sysDescr, sysName)
 * with candidate credentials, record what answers with the classifier's proposal, and offer
 * the result as a discovery import body.
 */
@Injectable()
export class SweepService {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  @Inject(SweepRepository)
  private repo: SweepRepository;

  @Inject(Credentials)
  private credentials: Credentials;

  @Inject(Classifier)
  private classifier: Classifier;

  @Inject(InventoryLimits)
  private limits: InventoryLimits;

  private stopping = false;

  $onDestroy(): void {
    this.stopping = true;
  }

  async create(body: SweepCreate): Promise<string> {
    const pool = body.pool === undefined || body.pool === null ? null : body.pool;
    assertPoolName(pool);
    const range = parseSweepRange(body.cidr);
    if (!range) throw badRequest("invalid_cidr", "cidr must be an IPv4 or IPv6 address, optionally with /prefix (for example 192.0.2.0/24).");
    const cap = this.limits.sweepSize;
    if (range.count > BigInt(cap)) {
      throw badRequest("too_many_addresses", `One sweep covers at most ${cap} addresses (pluginConfig.inventory.sweepSize); split the range.`);
    }
    const ids = body.credential_ids.map((id) => id.toLowerCase());
    for (const [i, id] of ids.entries()) {
      if (!isUuid(id)) throw badRequest("validation_failed", `credential_ids[${i}] must be a uuid.`);
    }
    if (new Set(ids).size !== ids.length) throw badRequest("validation_failed", "credential_ids must not repeat an id.");
    for (const [i, id] of ids.entries()) {
      const c = await this.credentials.reveal(id);
      if (!c) throw badRequest("unknown_reference", `credential_ids[${i}] names no credential.`);
      if (c.kind !== "snmp_v2c" && c.kind !== "snmp_v3")
        throw badRequest("invalid_credential", `credential_ids[${i}] is not an SNMP credential (snmp_v2c or snmp_v3).`);
    }
    const id = await this.repo.insert({
      cidr: range.cidr,
      port: body.port ?? SWEEP_DEFAULT_PORT,
      pool,
      credential_ids: ids,
      timeout_ms: body.timeout_ms ?? SWEEP_DEFAULT_TIMEOUT_MS,
      total: Number(range.count),
      created_by: requireCaller().username,
    });
    try {
      await this.ctx.jobs.now("sweep", { id });
    } catch (err) {
      await this.repo.finish(id, "failed", "could not be scheduled");
      throw err;
    }
    return id;
  }

  async list(limit: number, cursor: string | undefined): Promise<{ rows: SweepView[]; next: string | null }> {
    let after: { created_at: string; id: string } | null = null;
    if (cursor !== undefined) {
      const [created_at, id] = decodeCursor(cursor, 2, ([at, last]) => isUuid(last) && isRfc3339(at));
      after = { created_at, id };
    }
    await this.repo.failStale(SWEEP_STALE_SECS);
    const found = await this.repo.list(limit + 1, after);
    const { rows, next } = page(found, limit, (r) => [r.sort_at, r.id]);
    return { rows: rows.map(({ sort_at: _, ...view }) => view), next };
  }

  async get(id: string): Promise<SweepDetail> {
    await this.repo.failStale(SWEEP_STALE_SECS);
    const sweep = await this.repo.get(id);
    if (!sweep) throw notFound("No such sweep.");
    const results = await this.repo.results(id);
    const nodes: SweepImportNode[] = results.map((r) => ({
      name: r.sys_name?.trim() || r.address,
      address: r.address,
      credential_id: r.credential_id,
      profile_id: r.proposed_profile_id,
      vendor: r.vendor,
      model: r.model,
      // The node is polled where the sweep found its agent.
      ...(sweep.port !== SWEEP_DEFAULT_PORT ? { snmp_port: sweep.port } : {}),
    }));
    return { ...sweep, results, import_body: { nodes } };
  }

  /** The job: probes the range once (a second run of the same sweep finds nothing to claim). */
  async run(id: string): Promise<void> {
    const sweep = await this.repo.claim(id);
    if (!sweep) return;
    const log = this.ctx.log.child("sweep");
    try {
      const range = parseSweepRange(sweep.cidr);
      if (!range) throw new Error("stored range does not parse");
      const candidates = await this.candidates(sweep.credential_ids);
      if (!candidates.length) {
        await this.repo.finish(id, "failed", "none of its credentials exists any more as an SNMP credential");
        this.publish("progress", { ...this.counts(sweep, 0, 0), status: "failed" });
        return;
      }
      log.info("sweep started", { id, cidr: sweep.cidr, total: sweep.total, credentials: candidates.length });
      const outcome = await this.probeAll(sweep, range, candidates);
      if (outcome === "stopped") {
        await this.repo.finish(id, "failed", "interrupted by a shutdown");
        return;
      }
      await this.repo.finish(id, "done", null);
      const final = await this.repo.get(id);
      if (final) this.publish("progress", this.counts(final, final.probed, final.found));
      log.info("sweep done", { id, probed: final?.probed, found: final?.found });
    } catch (err) {
      log.error("sweep failed", { id, error: (err as Error).message });
      await this.repo.finish(id, "failed", "internal error (see the log)").catch(() => undefined);
      this.publish("progress", { ...this.counts(sweep, sweep.probed, sweep.found), status: "failed" });
    }
  }

  private async candidates(ids: string[]): Promise<Candidate[]> {
    const out: Candidate[] = [];
    for (const id of ids) {
      const cred = snmpCredentialOf((await this.credentials.reveal(id)) as Revealed);
      if (cred) out.push({ id, cred });
    }
    return out;
  }

  private counts(s: SweepView, probed: number, found: number) {
    return { id: s.id, status: s.status, cidr: s.cidr, total: s.total, probed, found };
  }

  private publish(event: "progress" | "found", payload: unknown): void {
    try {
      this.ctx.realtime.publish(SWEEP_CHANNEL.name, `sweep.${event}`, payload);
    } catch (err) {
      this.ctx.log.warn("sweep event not published", { error: (err as Error).message });
    }
  }

  /** Bounded concurrency over the range; answers and counts are written in batches. */
  private async probeAll(sweep: SweepView, range: SweepRange, candidates: Candidate[]): Promise<"done" | "stopped"> {
    const addresses = addressesOf(range);
    let probed = 0;
    let pending: SweepFound[] = [];
    let lastFlush = Date.now();
    let writing: Promise<void> = Promise.resolve();
    const flush = () => {
      const batch = pending;
      pending = [];
      lastFlush = Date.now();
      const count = probed;
      writing = writing.then(async () => {
        const found = await this.repo.progress(sweep.id, count, batch);
        if (batch.length) this.publish("found", { id: sweep.id, results: batch });
        this.publish("progress", { ...this.counts(sweep, count, found), status: "running" });
      });
      return writing;
    };

    const worker = async () => {
      for (;;) {
        if (this.stopping) return;
        const next = addresses.next();
        if (next.done) return;
        const hit = await this.probe(next.value, sweep, candidates);
        probed++;
        if (hit) pending.push(hit);
        if (Date.now() - lastFlush >= SWEEP_PROGRESS_MS) await flush();
      }
    };
    await Promise.all(Array.from({ length: Math.min(SWEEP_CONCURRENCY, Number(range.count)) }, worker));
    await flush();
    return this.stopping ? "stopped" : "done";
  }

  /** Every candidate at once; the first in the sweep's order that answers wins (a silent address costs one timeout). */
  private async probe(address: string, sweep: SweepView, candidates: Candidate[]): Promise<SweepFound | null> {
    const oids = [SYSTEM_OIDS.sysObjectID, SYSTEM_OIDS.sysDescr, SYSTEM_OIDS.sysName];
    const hit = await firstInOrder(
      candidates.map((c) => snmpGet(address, c.cred, oids, { port: sweep.port, timeoutMs: sweep.timeout_ms, retries: 0 }).then((r) => (r.ok ? r : null))),
    );
    if (!hit) return null;
    const [oid, descr, name] = hit.value.values.map((v) => v?.text ?? null);
    const sysObjectId = oid ? oid.replace(/^\./, "") : null;
    const classification = await this.classifier.classify(sysObjectId, descr);
    return {
      address,
      sys_name: name,
      sys_object_id: sysObjectId,
      sys_descr: descr,
      credential_id: candidates[hit.index].id,
      proposed_profile_id: classification?.profile_id ?? null,
      vendor: classification?.vendor ?? null,
      model: classification?.model ?? null,
    };
  }
}
