import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Example,
  Format,
  Integer,
  Maximum,
  MaxItems,
  MaxLength,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Pattern,
  Property,
  Required,
} from "@tsed/schema";

const SITE_FIELD_PATTERN = "^[A-Za-z0-9_.-]+$";

/** The spec's "Ipam server (update body; full-document PUT)". */
@AdditionalProperties(false)
@Description("Body of the full-document PUT /ipam/servers/{id}.")
export class IpamServerBody {
  @Required() @MinLength(1) @MaxLength(120) @Description("1 to 120 characters, not blank") name: string;
  @Required()
  @MinLength(1)
  @MaxLength(2048)
  @Example("https://ipam.example.net")
  @Description("https URL of the IPAM server (its API is under <base_url>/api/); no user, password, query or fragment (400 invalid_base_url)")
  base_url: string;
  @Description("Disabled servers are not synced") @Required() enabled: boolean;
  @Optional() @Integer() @Minimum(60) @Maximum(604800) @Description("seconds between syncs; default 3600") sync_interval_secs?: number;
  @Optional()
  @Nullable(String)
  @MinLength(1)
  @MaxLength(100)
  @Pattern(SITE_FIELD_PATTERN)
  @Description("custom field of a prefix naming its site id; null = the prefix's own site. Two-state: omitting clears it")
  site_id_field?: string | null;
  @Optional()
  @Nullable(String)
  @MinLength(1)
  @MaxLength(1000)
  @Description("replacement API token, sealed, never answered; omitted or null keeps the stored token")
  token?: string | null;
  @Optional()
  @Nullable(String)
  @MaxLength(262144)
  @Description("PEM certificates trusted besides the system roots. Three-state: absent keeps the stored CA, null clears it, a string replaces it")
  ca_cert_pem?: string | null;
}

/** The create body: the update body with the token required. */
@AdditionalProperties(false)
@Description("Body of POST /ipam/servers: the update body with the token required.")
export class IpamServerCreateBody {
  @Description("1 to 120 characters, not blank") @Required() @MinLength(1) @MaxLength(120) name: string;
  @Description("https URL of the IPAM server (its API is under <base_url>/api/)")
  @Required()
  @MinLength(1)
  @MaxLength(2048)
  @Example("https://ipam.example.net")
  base_url: string;
  @Optional() @Description("default true") enabled?: boolean;
  @Optional() @Integer() @Minimum(60) @Maximum(604800) @Description("default 3600") sync_interval_secs?: number;
  @Description("Custom field of a prefix naming its site id; null or absent = the prefix's own site")
  @Optional()
  @Nullable(String)
  @MinLength(1)
  @MaxLength(100)
  @Pattern(SITE_FIELD_PATTERN)
  site_id_field?: string | null;
  @Required() @MinLength(1) @MaxLength(1000) @Description("API token (Authorization: Token <t>), sealed, never answered") token: string;
  @Description("PEM certificates trusted besides the system roots; null or absent = none") @Optional() @Nullable(String) @MaxLength(262144) ca_cert_pem?:
    string | null;
}

@Description("The sync state of an ipam server connection.")
export class IpamServerStatus {
  @Property() @Nullable(String) @Format("date-time") @Description("end of the last sync, whatever its outcome") last_sync_at: string | null;
  @Description("End of the last successful sync; null = none yet") @Property() @Nullable(String) @Format("date-time") last_success_at: string | null;
  @Property()
  @Nullable(String)
  @Description(
    "class of the last sync's failure (null after a success): auth_refused, http_status, redirect, timeout, connect, tls, bad_response, foreign_next, too_many_objects, token_unreadable, internal",
  )
  last_error_class: string | null;
  @Description("Sites the last successful sync read; null = none yet") @Property() @Nullable(Number) @Integer() site_count: number | null;
  @Description("Prefixes the last successful sync read; null = none yet") @Property() @Nullable(Number) @Integer() prefix_count: number | null;
  @Description("When the next sync is due") @Required() @Format("date-time") next_sync_at: string;
}

/** A server as answered: never its token, only whether one is stored. */
@Description("An ipam server connection without its token (GET /ipam/servers, GET /ipam/servers/{id}).")
export class IpamServerView {
  @Required() @Format("uuid") id: string;
  @Required() name: string;
  @Description("https URL of the IPAM server") @Required() base_url: string;
  @Description("Disabled servers are not synced") @Required() enabled: boolean;
  @Description("Seconds between syncs") @Required() @Integer() sync_interval_secs: number;
  @Description("Custom field of a prefix naming its site id; null = the prefix's own site") @Property() @Nullable(String) site_id_field: string | null;
  @Required() @Description("a token is stored (sealed)") has_token: boolean;
  @Description("PEM certificates trusted besides the system roots; null = none") @Property() @Nullable(String) ca_cert_pem: string | null;
  @Required() status: IpamServerStatus;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

@Description("A site of an ipam server and the folder it maps to (GET /ipam/servers/{id}/sites).")
export class IpamSiteView {
  @Description("The site's id on the IPAM server") @Required() site_id: string;
  @Description("The site's name on the IPAM server") @Required() name: string;
  @Description("The site's slug on the IPAM server; null when it has none") @Property() @Nullable(String) slug: string | null;
  @Description("Prefixes of the site") @Required() @Integer() prefix_count: number;
  @Property() @Nullable(String) @Format("uuid") @Description("the folder whose ip_ranges follow this site") folder_id: string | null;
}

@AdditionalProperties(false)
@Description("One ipam site and the folder it maps to.")
export class SiteMappingBody {
  @Description("The site's id on the IPAM server") @Required() @MinLength(1) @MaxLength(200) site_id: string;
  @Description("The folder whose ip_ranges follow this site") @Required() @Format("uuid") folder_id: string;
}

@AdditionalProperties(false)
@Description("Body of PUT /ipam/servers/{id}/site-mappings: the whole set of site-to-folder mappings.")
export class SiteMappingsBody {
  @Required()
  @CollectionOf(SiteMappingBody)
  @MaxItems(10000)
  @Description("the whole mapping of this server: each IPAM site at most once; a site left out is unmapped")
  mappings: SiteMappingBody[];
}

@Description("An ipam site mapped to a folder (GET and PUT /ipam/servers/{id}/site-mappings).")
export class SiteMappingView {
  @Description("The site's id on the IPAM server") @Required() site_id: string;
  @Description("The site's name; null when the synced sites do not hold it") @Property() @Nullable(String) site_name: string | null;
  @Description("The folder whose ip_ranges follow this site") @Required() @Format("uuid") folder_id: string;
}

/** The spec's "Subnet overlap ack". */
@AdditionalProperties(false)
@Description("Body of PUT /subnet-overlaps/acks: marks an overlap as deliberate.")
export class OverlapAckBody {
  @Required() @MinLength(1) @MaxLength(200) @Description("the key GET /subnet-overlaps answered") key: string;
  @Optional() @Nullable(String) @Description("why the overlap is deliberate; at most 1000 characters (400 text_too_long)") note?: string | null;
}

@Description("A site that takes part in a subnet overlap.")
export class OverlapSite {
  @Required() @Description("ipam:<server id>:<site id> or folder:<folder id>") key: string;
  @Required() @Description("ipam (a site of an IPAM server) or folder (an inventory folder's own ip_ranges)") kind: string;
  @Description("kind ipam: the IPAM server; null otherwise") @Property() @Nullable(String) @Format("uuid") server_id: string | null;
  @Description("kind ipam: the site's id on that server; null otherwise") @Property() @Nullable(String) site_id: string | null;
  @Description("The folder: the one a site maps to, or the folder itself; null when unmapped") @Property() @Nullable(String) @Format("uuid") folder_id:
    string | null;
  @Description("Site or folder name; null when unknown") @Property() @Nullable(String) name: string | null;
}

@Description("Whether a subnet overlap was acknowledged as deliberate, by whom and when.")
export class OverlapAckState {
  @Required() @Description("true while the sites the overlap spans are all among those it was acked for") acked: boolean;
  @Description("Why the overlap is deliberate; null = none") @Property() @Nullable(String) note: string | null;
  @Description("When it was acknowledged; null = never") @Property() @Nullable(String) @Format("date-time") acked_at: string | null;
  @Description("Username or token name of the caller who acknowledged; null = never") @Property() @Nullable(String) by: string | null;
  @Required() @CollectionOf(String) @Description("the site keys the ack was stored for (empty when never acked)") sites: string[];
}

@Description("Sites whose address prefixes overlap, and whether the overlap was acknowledged (GET /subnet-overlaps).")
export class OverlapView {
  @Required() @Description("first 32 hex digits of SHA-256 of '<lower prefix> <higher prefix>'") key: string;
  @Required() @CollectionOf(String) @Description("the two prefixes, lower first (equal when one prefix is claimed by two sites)") prefixes: string[];
  @Description("The sites that claim the prefixes") @Required() @CollectionOf(OverlapSite) sites: OverlapSite[];
  @Required() ack: OverlapAckState;
}
