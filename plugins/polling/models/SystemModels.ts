import { CollectionOf, Description, Enum, Format, Integer, Nullable, Required } from "@tsed/schema";

@Description("A watched filesystem of a host telemetry entry.")
export class HostDisk {
  @Required() @Description('Label of the watched filesystem ("/", "data", "buffer")') mount: string;
  @Required() @Integer() @Description("0 = capacity unknown (used_bytes is then a bare size)") size_bytes: number;
  @Description("Bytes in use") @Required() @Integer() used_bytes: number;
}

/** Host telemetry entry (spec). */
@Description("Host telemetry of the core or of one poller, as GET /system/hosts lists it.")
export class HostEntry {
  @Required() @Description("core, or the poller id") instance: string;
  @Description("core or poller") @Required() @Enum("core", "poller") role: "core" | "poller";
  @Description("Whether the host reports now") @Required() online: boolean;
  @Required() @Nullable(String) @Description("null for the core") pool: string | null;
  @Required() @Nullable(Number) @Description("0 to 100") cpu_pct: number | null;
  @Description("One-minute load average; null when unknown") @Required() @Nullable(Number) load1: number | null;
  @Description("null when unknown") @Required() @Nullable(Number) @Integer() mem_total_bytes: number | null;
  @Description("null when unknown") @Required() @Nullable(Number) @Integer() mem_used_bytes: number | null;
  @Description("null when unknown") @Required() @Nullable(Number) mem_used_pct: number | null;
  @Required() @Nullable(Number) @Description("Highest used % of the watched filesystems") disk_used_pct: number | null;
  @Description("Watched filesystems") @Required() @CollectionOf(HostDisk) disks: HostDisk[];
  @Required()
  @CollectionOf(Number)
  @Description(
    "What the host received and lost since it started, by counter name: on the core events_queue_dropped (the events plugin's queue overflow), events_journal_dropped and events_journal_backlog (its ingest journals), on a poller events_forward_lost (events the core did not take); {} when none",
  )
  counters: Record<string, number>;
}

@Description("Host telemetry of the core and of every reporting poller (GET /system/hosts).")
export class HostList {
  @Required() @CollectionOf(HostEntry) hosts: HostEntry[];
}

/** Monitoring gap (spec). */
@Description("A span during which a poller was partitioned and passive data may be lost (GET /monitoring-gaps).")
export class MonitoringGap {
  @Required() @Format("uuid") id: string;
  @Description("The poller that was partitioned") @Required() poller_id: string;
  @Description("The poller's pool") @Required() pool: string;
  @Required() @Format("date-time") @Description("The poller's last contact before it went silent") started_at: string;
  @Required() @Format("date-time") @Description("When it came back") ended_at: string;
  @Description("When the gap was recorded") @Required() @Format("date-time") recorded_at: string;
  @Description("Seconds from started_at to ended_at") @Required() @Integer() duration_secs: number;
  @Required()
  @CollectionOf(String)
  @Description("Passive listeners it had bound when the gap began (their data is lost); empty = no passive data lost")
  listeners: string[];
}
