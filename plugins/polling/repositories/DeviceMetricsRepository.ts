import { Inject, Injectable } from "@tsed/di";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { RAW_COUNTER_METRICS } from "../contract.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

/** One latest value, with the node's name and folder path for its labels. */
export interface DeviceSampleRow {
  metric: string;
  /** -1 when the value is not an interface's. */
  ifindex: number;
  /** -1 when the value is not a table row's (CPU, storage). */
  row_key: number;
  value: number;
  if_name: string | null;
  row_name: string | null;
  node_id: string;
  node_name: string;
  /** The node's folder names from the root, joined with "/" (empty at the tree root). */
  folder: string;
  /** When the value was measured, Unix seconds. */
  at_secs: number;
}

/** SQL of the device metrics exposition: polling.latest, through inventory's published node directory. */
@Injectable()
export class DeviceMetricsRepository {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  /**
   * The latest value of every series of the nodes a caller may see (`folders` null = every node), raw counters left
   * out (their rates are there), grouped by metric, at most `limit` rows.
   */
  async latest(folders: string[] | null, limit: number): Promise<DeviceSampleRow[]> {
    const { rows } = await this.ctx.store.query<DeviceSampleRow>(
      `SELECT l.metric, l.ifindex, l.row_key, l.value, l.if_name, l.row_name, d.id AS node_id, d.name AS node_name,
              array_to_string(d.folder_names, '/') AS folder, extract(epoch FROM l.at)::float8 AS at_secs
         FROM ${this.ctx.store.table("latest")} l
         JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = l.node_id
        WHERE ($1::uuid[] IS NULL OR d.folder_path && $1::uuid[]) AND l.metric <> ALL($2::text[])
        ORDER BY l.metric, d.name, l.node_id, l.ifindex, l.row_key
        LIMIT $3`,
      [folders, [...RAW_COUNTER_METRICS], limit],
    );
    return rows;
  }
}
