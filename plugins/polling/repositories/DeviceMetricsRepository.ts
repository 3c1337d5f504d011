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
}

/** A node's newest value: when it was measured (Unix seconds). */
export interface DeviceNewestRow {
  node_id: string;
  node_name: string;
  folder: string;
  at_secs: number;
}

const FROM = (latest: string) => `FROM ${latest} l JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = l.node_id
  WHERE ($1::uuid[] IS NULL OR d.folder_path && $1::uuid[]) AND l.metric <> ALL($2::text[])`;

/** SQL of the device metrics exposition: polling.latest, through inventory's published node directory. */
@Injectable()
export class DeviceMetricsRepository {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  /**
   * The latest value of every series of the nodes a caller may see (`folders` null = every node), raw counters left
   * out (their rates are there), at most `limit` rows, handed to `onRows` a batch at a time through a server-side
   * cursor (so the answer never sits in memory whole). Ordered by the metrics in `order` first, then by metric, node
   * and interface or row, so each family's series come together.
   */
  async each(
    folders: string[] | null,
    order: readonly string[],
    limit: number,
    onRows: (rows: DeviceSampleRow[]) => Promise<void>,
    batch = 5000,
  ): Promise<void> {
    await this.ctx.store.tx(async (client) => {
      await client.query(
        `DECLARE device_rows NO SCROLL CURSOR FOR
         SELECT l.metric, l.ifindex, l.row_key, l.value, l.if_name, l.row_name, d.id AS node_id, d.name AS node_name,
                array_to_string(d.folder_names, '/') AS folder
           ${FROM(this.ctx.store.table("latest"))}
          ORDER BY array_position($3::text[], l.metric) NULLS LAST, l.metric, d.name, l.node_id, l.ifindex, l.row_key
          LIMIT $4`,
        [folders, [...RAW_COUNTER_METRICS], order, limit],
      );
      for (;;) {
        const { rows } = await client.query<DeviceSampleRow>(`FETCH ${batch} FROM device_rows`);
        if (rows.length) await onRows(rows);
        if (rows.length < batch) break;
      }
      await client.query("CLOSE device_rows");
    });
  }

  /** Each visible node's newest value's time (its data age). */
  async newest(folders: string[] | null): Promise<DeviceNewestRow[]> {
    const { rows } = await this.ctx.store.query<DeviceNewestRow>(
      `SELECT d.id AS node_id, d.name AS node_name, array_to_string(d.folder_names, '/') AS folder, extract(epoch FROM max(l.at))::float8 AS at_secs
         ${FROM(this.ctx.store.table("latest"))}
        GROUP BY d.id, d.name, d.folder_names
        ORDER BY d.name, d.id`,
      [folders, [...RAW_COUNTER_METRICS]],
    );
    return rows;
  }
}
