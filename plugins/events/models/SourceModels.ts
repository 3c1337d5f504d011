import { AdditionalProperties, Description, Enum, Format, MaxLength, MinLength, Nullable, Optional, Required } from "@tsed/schema";

export const SOURCE_KINDS_STORED = ["syslog", "trap", "http"] as const;

@AdditionalProperties(false)
export class EventSourceBody {
  @Required()
  @Enum(...SOURCE_KINDS_STORED)
  @Description(
    "syslog or trap: what one node sends (node_id required); http: an ingest endpoint with its own token (node_id optional: the node its events are filed under)",
  )
  kind: string;
  @Required() @MinLength(1) @MaxLength(120) name: string;
  @Optional() @Nullable(String) @Format("uuid") node_id?: string | null;
  @Optional() @Description("default true; a disabled source's events are dropped (counted), a disabled http source refuses posts") enabled?: boolean;
}

@AdditionalProperties(false)
export class EventSourceUpdate {
  @Optional() @MinLength(1) @MaxLength(120) name?: string;
  @Optional() @Nullable(String) @Format("uuid") node_id?: string | null;
  @Optional() enabled?: boolean;
}

export class EventSourceView {
  @Required() id: string;
  @Required() kind: string;
  @Required() name: string;
  @Required() @Nullable(String) node_id: string | null;
  @Required() enabled: boolean;
  @Required() @Description("the catch-all source of a listener stream (cannot be deleted)") builtin: boolean;
  @Required() @Description("http sources: an ingest token is set (it is shown once, when made)") has_token: boolean;
  @Required() created_at: string;
  @Required() updated_at: string;
}

export class CreatedSource {
  @Required() @Format("uuid") id: string;
  @Optional() @Description("http sources only, shown this once: send it as Authorization: Bearer to POST /events/ingest") token?: string;
}

export class IngestToken {
  @Required() token: string;
}
