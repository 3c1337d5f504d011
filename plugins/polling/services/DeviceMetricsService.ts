import { Inject, Injectable } from "@tsed/di";
import { scopeFolders, type Scope } from "../../../core/index.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";
import { DeviceMetricsRepository, type DeviceSampleRow } from "../repositories/DeviceMetricsRepository.js";

/** The Prometheus exposition format (text 0.0.4) the device metrics are served in. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Subject = "interface" | "row" | "node";

/** A polled metric as a Prometheus gauge family: its name in base units, its help text, the factor to base units. */
interface Family {
  name: string;
  help: string;
  subject: Subject;
  scale: number;
}

const family = (name: string, help: string, subject: Subject, scale = 1): Family => ({ name: `nms_device_${name}`, help, subject, scale });

/**
 * The polled metrics with a family of their own, in the order they are written. Bits become bytes, percentages ratios
 * and milliseconds seconds, as Prometheus names want base units (promtool refuses `_bits` and `_ms`).
 */
export const DEVICE_FAMILIES: ReadonlyMap<string, Family> = new Map([
  ["if_in_bps", family("interface_in_bytes_per_second", "Inbound traffic of an interface, bytes per second (IF-MIB octet counters)", "interface", 1 / 8)],
  ["if_out_bps", family("interface_out_bytes_per_second", "Outbound traffic of an interface, bytes per second (IF-MIB octet counters)", "interface", 1 / 8)],
  ["if_util_in_pct", family("interface_in_utilization_ratio", "Inbound traffic of an interface over its speed, 0 to 1", "interface", 0.01)],
  ["if_util_out_pct", family("interface_out_utilization_ratio", "Outbound traffic of an interface over its speed, 0 to 1", "interface", 0.01)],
  ["if_in_errors_ps", family("interface_in_errors_per_second", "Inbound errors of an interface per second", "interface")],
  ["if_out_errors_ps", family("interface_out_errors_per_second", "Outbound errors of an interface per second", "interface")],
  ["if_in_discards_ps", family("interface_in_discards_per_second", "Inbound discards of an interface per second", "interface")],
  ["if_out_discards_ps", family("interface_out_discards_per_second", "Outbound discards of an interface per second", "interface")],
  ["if_oper_up", family("interface_up", "1 when the interface's operational status is up, else 0", "interface")],
  ["cpu_load_pct", family("cpu_load_ratio", "Load of a processor (HOST-RESOURCES hrProcessorLoad), 0 to 1", "row", 0.01)],
  ["storage_used_pct", family("storage_used_ratio", "Used share of a storage area (HOST-RESOURCES hrStorage), 0 to 1", "row", 0.01)],
  ["sys_uptime_secs", family("uptime_seconds", "The agent's uptime (sysUpTime), seconds", "node")],
  ["reachable", family("reachable", "1 when the node answered its liveness check (ICMP or TCP), else 0", "node")],
  ["rtt_ms", family("rtt_seconds", "Round-trip time of the liveness check, seconds", "node", 0.001)],
  ["snmp_agent_status", family("snmp_agent_status", "The SNMP agent in the last poll: 0 answering, 1 timeout, 2 credentials refused, 3 other error", "node")],
]);

/** Everything else polled (URL and DNS checks, collection templates), one family with the metric's name as a label. */
const OTHER: Family = family("sample_value", "Other polled metrics (URL and DNS checks, collection templates), by metric name, as measured", "row");
const LAST_SAMPLE = family(
  "last_sample_timestamp_seconds",
  "When the newest value of the node was measured, Unix seconds (time() minus it is the data's age)",
  "node",
);
const TRUNCATED = family("series_truncated", "1 when this answer left series out to stay within pluginConfig.polling.deviceMetricsMaxSeries, else 0", "node");

/** A label value as the exposition format quotes it. */
function quote(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

function labels(pairs: [string, string][]): string {
  return `{${pairs.map(([k, v]) => `${k}=${quote(v)}`).join(",")}}`;
}

/** A number as Prometheus writes it (NaN and infinities by name). */
function number(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/**
 * What the pollers measured, for Prometheus and Grafana: the latest value of every series of the nodes the caller may
 * see, as gauges labelled with the node (name and id), its folder path and the interface or table row. Bounded: at
 * most `deviceMetricsMaxSeries` series per answer (`nms_device_series_truncated` says when some were left out).
 */
@Injectable()
export class DeviceMetricsService {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  @Inject(DeviceMetricsRepository)
  private repo: DeviceMetricsRepository;

  /**
   * Writes the exposition to `write` a batch at a time (each call resolves when the output took it): the families in
   * order, each node's newest-value time, and whether series were left out. Nothing is held whole in memory.
   */
  async exposition(scope: Scope, write: (chunk: string) => Promise<void>): Promise<void> {
    const max = this.ctx.config.deviceMetricsMaxSeries;
    const folders = scopeFolders(scope);
    const head = (fam: Family) => `# HELP ${fam.name} ${fam.help}\n# TYPE ${fam.name} gauge\n`;
    let current: Family | null = null;
    let series = 0;
    let truncated = false;
    await this.repo.each(folders, [...DEVICE_FAMILIES.keys()], max + 1, async (rows) => {
      let out = "";
      for (const row of rows) {
        if (++series > max) {
          truncated = true;
          break;
        }
        const fam = DEVICE_FAMILIES.get(row.metric) ?? OTHER;
        if (fam !== current) {
          current = fam;
          out += head(fam);
        }
        out += `${fam.name}${labels(this.labelsOf(row, fam))} ${number(row.value * fam.scale)}\n`;
      }
      if (out) await write(out);
    });
    const newest = await this.repo.newest(folders);
    let tail = "";
    if (newest.length) tail += head(LAST_SAMPLE) + newest.map((n) => `${LAST_SAMPLE.name}${labels(this.nodeLabels(n))} ${number(n.at_secs)}\n`).join("");
    tail += `${head(TRUNCATED)}${TRUNCATED.name} ${truncated ? 1 : 0}\n`;
    await write(tail);
  }

  private nodeLabels(row: Pick<DeviceSampleRow, "node_id" | "node_name" | "folder">): [string, string][] {
    return [
      ["node", row.node_name],
      ["node_id", row.node_id],
      ["folder", row.folder],
    ];
  }

  private labelsOf(row: DeviceSampleRow, fam: Family): [string, string][] {
    const pairs = this.nodeLabels(row);
    if (fam === OTHER) pairs.push(["metric", row.metric]);
    if (row.ifindex >= 0) pairs.push(["interface", row.if_name ?? `ifIndex ${row.ifindex}`], ["ifindex", String(row.ifindex)]);
    if (row.row_key >= 0) pairs.push(["row", String(row.row_key)], ["row_name", row.row_name ?? ""]);
    return pairs;
  }
}
