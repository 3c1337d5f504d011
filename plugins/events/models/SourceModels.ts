import { AdditionalProperties, Description, Enum, Format, MaxLength, MinLength, Nullable, Optional, Required } from "@tsed/schema";

export const SOURCE_KINDS_STORED = ["syslog", "trap", "http"] as const;

@AdditionalProperties(false)
@Description("Body of POST /event-sources: a new source of passive events.")
export class EventSourceBody {
  @Required()
  @Enum(...SOURCE_KINDS_STORED)
  @Description(
    "syslog or trap: what one node sends (node_id required); http: an ingest endpoint with its own token (node_id optional: the node its events are filed under)",
  )
  kind: string;
  @Description("Shown name of the source") @Required() @MinLength(1) @MaxLength(120) name: string;
  @Description("The node its events are filed under (required for syslog and trap)") @Optional() @Nullable(String) @Format("uuid") node_id?: string | null;
  @Optional() @Description("default true; a disabled source's events are dropped (counted), a disabled http source refuses posts") enabled?: boolean;
}

@AdditionalProperties(false)
@Description("Body of PATCH /event-sources/{id}.")
export class EventSourceUpdate {
  @Description("Shown name of the source") @Optional() @MinLength(1) @MaxLength(120) name?: string;
  @Description("The node its events are filed under") @Optional() @Nullable(String) @Format("uuid") node_id?: string | null;
  @Description("A disabled source's events are dropped (counted); a disabled http source refuses posts") @Optional() enabled?: boolean;
}

@Description("A source of passive events (GET /event-sources, GET /event-sources/{id}).")
export class EventSourceView {
  @Required() id: string;
  @Description("syslog, trap or http") @Required() kind: string;
  @Required() name: string;
  @Description("The node its events are filed under; null = none") @Required() @Nullable(String) node_id: string | null;
  @Description("A disabled source's events are dropped (counted); a disabled http source refuses posts") @Required() enabled: boolean;
  @Required() @Description("the catch-all source of a listener stream (cannot be deleted)") builtin: boolean;
  @Required() @Description("http sources: an ingest token is set (it is shown once, when made)") has_token: boolean;
  @Required() created_at: string;
  @Required() updated_at: string;
}

@Description("A new event source, with its ingest token when it has one (POST /event-sources).")
export class CreatedSource {
  @Required() @Format("uuid") id: string;
  @Optional() @Description("http sources only, shown this once: send it as Authorization: Bearer to POST /events/ingest") token?: string;
}

@Description("A new ingest token of an event source, shown once (POST /event-sources/{id}/token).")
export class IngestToken {
  @Description("Shown this once: send it as Authorization: Bearer to POST /events/ingest; the previous token stops working") @Required() token: string;
}
