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

  async exposition(scope: Scope): Promise<string> {
    const max = this.ctx.config.deviceMetricsMaxSeries;
    const rows = await this.repo.latest(scopeFolders(scope), max + 1);
    const truncated = rows.length > max;
    if (truncated) rows.length = max;
    const byFamily = new Map<Family, string[]>();
    const newest = new Map<string, { row: DeviceSampleRow; at: number }>();
    for (const row of rows) {
      const fam = DEVICE_FAMILIES.get(row.metric) ?? OTHER;
      let lines = byFamily.get(fam);
      if (!lines) byFamily.set(fam, (lines = []));
      lines.push(`${fam.name}${labels(this.labelsOf(row, fam))} ${number(row.value * fam.scale)}`);
      const seen = newest.get(row.node_id);
      if (!seen || row.at_secs > seen.at) newest.set(row.node_id, { row, at: row.at_secs });
    }
    const out: string[] = [];
    const write = (fam: Family, lines: readonly string[]) => {
      out.push(`# HELP ${fam.name} ${fam.help}`, `# TYPE ${fam.name} gauge`, ...lines);
    };
    for (const fam of [...DEVICE_FAMILIES.values(), OTHER]) {
      const lines = byFamily.get(fam);
      if (lines) write(fam, lines);
    }
    if (newest.size)
      write(
        LAST_SAMPLE,
        [...newest.values()].map(({ row, at }) => `${LAST_SAMPLE.name}${labels(this.nodeLabels(row))} ${number(at)}`),
      );
    write(TRUNCATED, [`${TRUNCATED.name} ${truncated ? 1 : 0}`]);
    return out.join("\n") + "\n";
  }

  private nodeLabels(row: DeviceSampleRow): [string, string][] {
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
