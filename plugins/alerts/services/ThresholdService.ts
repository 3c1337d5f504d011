import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isRfc3339, isUuid, notFound, page } from "../../../core/index.js";
import { isRawCounterMetric } from "../../polling/contract.js";
import { boundsProblem, primaryPair, resolveBounds } from "../lib/bands.js";
import { parsePort, type ScopeLevel } from "../lib/rules.js";
import { DWELL_DEFAULT, type ThresholdBody, type ThresholdView } from "../models/ThresholdModels.js";
import { ThresholdRepository, type StoredThreshold, type ThresholdRow } from "../repositories/ThresholdRepository.js";
import { AlertEngine } from "./AlertEngine.js";
import { RuleResolver } from "./RuleResolver.js";

const invalid = (message: string) => badRequest("validation_failed", message);

/**
 * Threshold rules: validation and normalisation of the spec's Threshold rule body,
 * storage, and invalidation of the engine's rule cache on every change.
 */
@Injectable()
export class ThresholdService {
  @Inject(ThresholdRepository)
  private repo: ThresholdRepository;

  @Inject(RuleResolver)
  private resolver: RuleResolver;

  @Inject(AlertEngine)
  private engine: AlertEngine;

  async list(limit: number, cursor: string | undefined, metric: string | undefined): Promise<{ rows: ThresholdView[]; next: string | null }> {
    let after: { created_at: string; id: string } | null = null;
    if (cursor !== undefined) {
      const [createdAt, id] = decodeCursor(cursor, 2, ([at, last]) => isUuid(last) && isRfc3339(at));
      after = { created_at: createdAt, id };
    }
    const found = await this.repo.list(limit + 1, after, metric ?? null);
    const { rows, next } = page(found, limit, (r) => [r.created_at, r.id]);
    return { rows: rows.map(toView), next };
  }

  async get(id: string): Promise<ThresholdView> {
    const found = await this.repo.get(id);
    if (!found) throw notFound("No such threshold.");
    return toView(found);
  }

  async create(body: ThresholdBody): Promise<string> {
    const id = await this.repo.insert(normalise(body));
    this.resolver.invalidateRules();
    return id;
  }

  async replace(id: string, body: ThresholdBody): Promise<ThresholdView> {
    const updated = await this.repo.update(id, normalise(body));
    if (!updated) throw notFound("No such threshold.");
    this.resolver.invalidateRules();
    return toView(updated);
  }

  async remove(id: string): Promise<void> {
    if (!(await this.repo.delete(id))) throw notFound("No such threshold.");
    this.resolver.invalidateRules();
    this.engine.clearCheck(id);
  }
}

function toView(r: StoredThreshold): ThresholdView {
  return {
    id: r.id,
    metric: r.metric,
    scope_level: r.scope_level,
    direction: r.direction,
    warning: r.warning,
    critical: r.critical,
    warning_above: r.warning_above,
    critical_above: r.critical_above,
    warning_below: r.warning_below,
    critical_below: r.critical_below,
    dwell_samples: r.dwell_samples,
    scope_ids: r.scope_ids,
    scope_id: r.scope_ids[0] ?? null,
    row_match: r.row_match,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/**
 * The rule a body stands for, or 400 validation_failed:
 * - the metric must not be a raw monotonic counter, by its metric or IF-MIB name in any
 *   case (the polling contract decides: isRawCounterMetric);
 * - targets: scope_ids when it names any, else [scope_id] when sent, else none; a
 *   global rule stores none whatever was sent; a profile, folder or node rule
 *   without targets is a global rule (the spec: omitted or empty = global); profile,
 *   folder and node targets are uuids, distinct; an interface rule names exactly one
 *   port `<node uuid>:<ifindex>` and takes no row_match;
 * - bounds: the four bounds when any carries a value, else warning and critical on
 *   the side `direction` names; at least one bound, critical no less severe than
 *   warning, and below bounds under above bounds;
 * - row_match: an empty pattern is none; dwell_samples defaults to 1.
 */
/**
 * The rule's `direction`: as sent, else (a body of the four bounds alone, which supersede it) the side of its above
 * bounds when it has any, else below. Only the legacy form (warning and critical) needs it.
 */
function directionOf(body: ThresholdBody): "above" | "below" {
  if (body.direction) return body.direction;
  const above = body.warning_above ?? body.critical_above ?? null;
  const below = body.warning_below ?? body.critical_below ?? null;
  if (above === null && below === null)
    throw invalid("direction is required with warning and critical (or send the four bounds: warning_above, critical_above, warning_below, critical_below).");
  return above !== null ? "above" : "below";
}

export function normalise(body: ThresholdBody): ThresholdRow {
  if (isRawCounterMetric(body.metric)) {
    throw invalid(`metric names a raw monotonic counter; set thresholds on its rate instead (for example if_in_bps rather than if_in_octets).`);
  }
  let level: ScopeLevel = body.scope_level;
  let targets: string[] = body.scope_ids && body.scope_ids.length > 0 ? body.scope_ids : body.scope_id ? [body.scope_id] : [];
  const rowMatch = body.row_match ? body.row_match : null;

  if (level === "global") {
    targets = [];
  } else if (level === "interface") {
    if (targets.length !== 1) throw invalid("An interface rule names exactly one port in scope_ids (or scope_id): <node uuid>:<ifindex>.");
    const port = parsePort(targets[0]);
    if (!port) throw invalid("An interface target is <node uuid>:<ifindex> with ifindex an integer from 0 to 2147483647.");
    targets = [`${port.node_id}:${port.ifindex}`];
    if (rowMatch !== null) throw invalid("row_match is not allowed on an interface rule.");
  } else if (targets.length === 0) {
    level = "global";
  } else {
    if (!targets.every(isUuid)) throw invalid(`Every ${level} target in scope_ids (or scope_id) must be a UUID.`);
    targets = targets.map((t) => t.toLowerCase());
    if (new Set(targets).size !== targets.length) throw invalid("scope_ids must not repeat a target.");
  }

  const direction = directionOf(body);
  const bounds = resolveBounds({ ...body, direction }, body);
  const problem = boundsProblem(bounds);
  if (problem) throw invalid(problem);
  const primary = primaryPair(direction, bounds);

  return {
    metric: body.metric,
    scope_level: level,
    direction,
    warning: primary.warning,
    critical: primary.critical,
    ...bounds,
    dwell_samples: body.dwell_samples ?? DWELL_DEFAULT,
    scope_ids: targets,
    row_match: rowMatch,
  };
}
