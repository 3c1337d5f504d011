import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isRfc3339, isUuid, notFound, page } from "../../../core/index.js";
import type { DeliveryDetail, DeliveryView } from "../models/DeliveryModels.js";
import { DeliveryRepository, type DeliveryFilter } from "../repositories/DeliveryRepository.js";

/** Reads of the delivery log. */
@Injectable()
export class DeliveryLogService {
  @Inject(DeliveryRepository)
  private repo: DeliveryRepository;

  async list(filter: DeliveryFilter, limit: number, cursor?: string): Promise<{ rows: DeliveryView[]; next: string | null }> {
    if (filter.since && filter.until && Date.parse(filter.since) >= Date.parse(filter.until))
      throw badRequest("validation_failed", "since must be before until.");
    const before = cursor ? (decodeCursor(cursor, 2, ([at, id]) => isRfc3339(at) && isUuid(id)) as [string, string]) : null;
    return page(await this.repo.list(filter, limit, before), limit, (r) => [r.created_at, r.id]);
  }

  async get(id: string): Promise<DeliveryDetail> {
    const row = isUuid(id) ? await this.repo.get(id) : null;
    if (!row) throw notFound("No such delivery.");
    return { ...row, attempt_log: await this.repo.attempts(id) };
  }
}
