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
export class IpamServerBody {
  @Required() @MinLength(1) @MaxLength(120) @Description("1 to 120 characters, not blank") name: string;
  @Required()
  @MinLength(1)
  @MaxLength(2048)
  @Example("https://ipam.example.net")
  @Description("https URL of the IPAM server (its API is under <base_url>/api/); no user, password, query or fragment (400 invalid_base_url)")
  base_url: string;
  @Required() enabled: boolean;
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
export class IpamServerCreateBody {
  @Required() @MinLength(1) @MaxLength(120) name: string;
  @Required() @MinLength(1) @MaxLength(2048) @Example("https://ipam.example.net") base_url: string;
  @Optional() @Description("default true") enabled?: boolean;
  @Optional() @Integer() @Minimum(60) @Maximum(604800) @Description("default 3600") sync_interval_secs?: number;
  @Optional() @Nullable(String) @MinLength(1) @MaxLength(100) @Pattern(SITE_FIELD_PATTERN) site_id_field?: string | null;
  @Required() @MinLength(1) @MaxLength(1000) @Description("API token (Authorization: Token <t>), sealed, never answered") token: string;
  @Optional() @Nullable(String) @MaxLength(262144) ca_cert_pem?: string | null;
}

export class IpamServerStatus {
  @Property() @Nullable(String) @Format("date-time") @Description("end of the last sync, whatever its outcome") last_sync_at: string | null;
  @Property() @Nullable(String) @Format("date-time") last_success_at: string | null;
  @Property()
  @Nullable(String)
  @Description(
    "class of the last sync's failure (null after a success): auth_refused, http_status, redirect, timeout, connect, tls, bad_response, foreign_next, too_many_objects, token_unreadable, internal",
  )
  last_error_class: string | null;
  @Property() @Nullable(Number) @Integer() site_count: number | null;
  @Property() @Nullable(Number) @Integer() prefix_count: number | null;
  @Required() @Format("date-time") next_sync_at: string;
}

/** A server as answered: never its token, only whether one is stored. */
export class IpamServerView {
  @Required() @Format("uuid") id: string;
  @Required() name: string;
  @Required() base_url: string;
  @Required() enabled: boolean;
  @Required() @Integer() sync_interval_secs: number;
  @Property() @Nullable(String) site_id_field: string | null;
  @Required() @Description("a token is stored (sealed)") has_token: boolean;
  @Property() @Nullable(String) ca_cert_pem: string | null;
  @Required() status: IpamServerStatus;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

export class IpamSiteView {
  @Required() site_id: string;
  @Required() name: string;
  @Property() @Nullable(String) slug: string | null;
  @Required() @Integer() prefix_count: number;
  @Property() @Nullable(String) @Format("uuid") @Description("the folder whose ip_ranges follow this site") folder_id: string | null;
}

@AdditionalProperties(false)
export class SiteMappingBody {
  @Required() @MinLength(1) @MaxLength(200) site_id: string;
  @Required() @Format("uuid") folder_id: string;
}

@AdditionalProperties(false)
export class SiteMappingsBody {
  @Required()
  @CollectionOf(SiteMappingBody)
  @MaxItems(10000)
  @Description("the whole mapping of this server: each IPAM site at most once; a site left out is unmapped")
  mappings: SiteMappingBody[];
}

export class SiteMappingView {
  @Required() site_id: string;
  @Property() @Nullable(String) site_name: string | null;
  @Required() @Format("uuid") folder_id: string;
}

/** The spec's "Subnet overlap ack". */
@AdditionalProperties(false)
export class OverlapAckBody {
  @Required() @MinLength(1) @MaxLength(200) @Description("the key GET /subnet-overlaps answered") key: string;
  @Optional() @Nullable(String) @Description("why the overlap is deliberate; at most 1000 characters (400 text_too_long)") note?: string | null;
}

export class OverlapSite {
  @Required() @Description("ipam:<server id>:<site id> or folder:<folder id>") key: string;
  @Required() @Description("ipam (a site of an IPAM server) or folder (an inventory folder's own ip_ranges)") kind: string;
  @Property() @Nullable(String) @Format("uuid") server_id: string | null;
  @Property() @Nullable(String) site_id: string | null;
  @Property() @Nullable(String) @Format("uuid") folder_id: string | null;
  @Property() @Nullable(String) name: string | null;
}

export class OverlapAckState {
  @Required() @Description("true while the sites the overlap spans are all among those it was acked for") acked: boolean;
  @Property() @Nullable(String) note: string | null;
  @Property() @Nullable(String) @Format("date-time") acked_at: string | null;
  @Property() @Nullable(String) by: string | null;
  @Required() @CollectionOf(String) @Description("the site keys the ack was stored for (empty when never acked)") sites: string[];
}

export class OverlapView {
  @Required() @Description("first 32 hex digits of SHA-256 of '<lower prefix> <higher prefix>'") key: string;
  @Required() @CollectionOf(String) @Description("the two prefixes, lower first (equal when one prefix is claimed by two sites)") prefixes: string[];
  @Required() @CollectionOf(OverlapSite) sites: OverlapSite[];
  @Required() ack: OverlapAckState;
}
