import { CollectionOf, Description, Enum, Format, Integer, Nullable, Required } from "@tsed/schema";

export class HostDisk {
  @Required() @Description('Label of the watched filesystem ("/", "data", "buffer")') mount: string;
  @Required() @Integer() @Description("0 = capacity unknown (used_bytes is then a bare size)") size_bytes: number;
  @Required() @Integer() used_bytes: number;
}

/** Host telemetry entry (spec). */
export class HostEntry {
  @Required() @Description("core, or the poller id") instance: string;
  @Required() @Enum("core", "poller") role: "core" | "poller";
  @Required() online: boolean;
  @Required() @Nullable(String) @Description("null for the core") pool: string | null;
  @Required() @Nullable(Number) @Description("0 to 100") cpu_pct: number | null;
  @Required() @Nullable(Number) load1: number | null;
  @Required() @Nullable(Number) @Integer() mem_total_bytes: number | null;
  @Required() @Nullable(Number) @Integer() mem_used_bytes: number | null;
  @Required() @Nullable(Number) mem_used_pct: number | null;
  @Required() @Nullable(Number) @Description("Highest used % of the watched filesystems") disk_used_pct: number | null;
  @Required() @CollectionOf(HostDisk) disks: HostDisk[];
  @Required()
  @CollectionOf(Number)
  @Description(
    "What the host received and lost since it started, by counter name: on the core events_queue_dropped (the events plugin's queue overflow), events_journal_dropped and events_journal_backlog (its ingest journals), on a poller events_forward_lost (events the core did not take); {} when none",
  )
  counters: Record<string, number>;
}

export class HostList {
  @Required() @CollectionOf(HostEntry) hosts: HostEntry[];
}

/** Monitoring gap (spec). */
export class MonitoringGap {
  @Required() @Format("uuid") id: string;
  @Required() poller_id: string;
  @Required() pool: string;
  @Required() @Format("date-time") @Description("The poller's last contact before it went silent") started_at: string;
  @Required() @Format("date-time") @Description("When it came back") ended_at: string;
  @Required() @Format("date-time") recorded_at: string;
  @Required() @Integer() duration_secs: number;
  @Required()
  @CollectionOf(String)
  @Description("Passive listeners it had bound when the gap began (their data is lost); empty = no passive data lost")
  listeners: string[];
}
