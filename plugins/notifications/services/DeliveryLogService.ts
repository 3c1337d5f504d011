import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isRfc3339, isUuid, notFound, page } from "../../../core/index.js";
import type { DeliveryDetail, DeliveryListQuery, DeliveryView } from "../models/DeliveryModels.js";
import { DeliveryRepository } from "../repositories/DeliveryRepository.js";

/** Reads of the delivery log. */
@Injectable()
export class DeliveryLogService {
  @Inject(DeliveryRepository)
  private repo: DeliveryRepository;

  async list(query: DeliveryListQuery): Promise<{ rows: DeliveryView[]; next: string | null }> {
    const { limit, cursor, since, until } = query;
    if (since && until && Date.parse(since) >= Date.parse(until)) throw badRequest("validation_failed", "since must be before until.");
    const before = cursor ? (decodeCursor(cursor, 2, ([at, id]) => isRfc3339(at) && isUuid(id)) as [string, string]) : null;
    const filter = { channel_id: query.channel_id, status: query.status, incident_key: query.alert, since, until };
    return page(await this.repo.list(filter, limit, before), limit, (r) => [r.created_at, r.id]);
  }

  async get(id: string): Promise<DeliveryDetail> {
    const row = isUuid(id) ? await this.repo.get(id) : null;
    if (!row) throw notFound("No such delivery.");
    return { ...row, attempt_log: await this.repo.attempts(id) };
  }
}
