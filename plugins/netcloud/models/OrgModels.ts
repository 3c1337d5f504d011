import { AdditionalProperties, Description, Enum, Example, Format, MaxLength, MinLength, Nullable, Optional, Property, Required } from "@tsed/schema";

/** The spec's discovery body: a typed key or a stored credential (never both), and optionally the platform's base URL. */
@AdditionalProperties(false)
export class DiscoverBody {
  @Optional() @Nullable(String) @MaxLength(1024) @Description("a typed API key; send this or credential_id, never both") api_key?: string | null;
  @Optional() @Nullable(String) @Format("uuid") @Description("a stored netcloud_api credential of the inventory plugin") credential_id?: string | null;
  @Optional()
  @Nullable(String)
  @MaxLength(2048)
  @Example("https://api.meraki.com/api/v1")
  @Description("https, on pluginConfig.netcloud.allowedHosts; null or omitted = pluginConfig.netcloud.defaultBaseUrl")
  base_url?: string | null;
}

export class DiscoveredOrg {
  @Required() @Description("the platform's organization id") id: string;
  @Required() name: string;
  @Required() @Description("true when the organization is monitored here already, under any key") already_added: boolean;
}

/** Adds an organization: the discovery body plus the organization's id (as discovery answered it). */
@AdditionalProperties(false)
export class OrgAddBody extends DiscoverBody {
  @Required() @MinLength(1) @MaxLength(255) @Description("the platform's organization id (the id discovery answers)") org_id: string;
}

export class OrgAdded {
  @Required() @Format("uuid") @Description("the organization row (the existing one when skipped)") id: string;
  @Required() @Description("true when the organization was monitored here already: nothing was changed") skipped: boolean;
}

/** The spec's import settings. max_devices is checked by the service (400 invalid_max_devices, not validation_failed). */
@AdditionalProperties(false)
export class ImportSettingsBody {
  @Required() @Description("import the devices of watched networks as nodes at each sync") import_devices: boolean;
  @Required() @Description("file imported devices into the folder whose IP range holds their address") file_by_prefix: boolean;
  @Optional()
  @Nullable(Number)
  @Description("1 to 50000 devices this organization may bring in (nodes still standing); null = no cap; absent keeps the current value")
  max_devices?: number | null;
}

export class OrgView {
  @Required() @Format("uuid") id: string;
  @Required() @Description("the platform's organization id") org_id: string;
  @Required() name: string;
  @Required() base_url: string;
  @Required() @Enum("api_key", "credential") @Description("a typed key (sealed here, never answered) or a stored credential") key_source: string;
  @Required() @Nullable(String) @Format("uuid") credential_id: string | null;
  @Required() import_devices: boolean;
  @Required() file_by_prefix: boolean;
  @Required() @Nullable(Number) max_devices: number | null;
  @Required() @Nullable(String) @Format("date-time") last_sync_at: string | null;
  @Required()
  @Nullable(String)
  @Description(
    "ok, or the failure kind of the last sync: key_refused, not_found, unreachable, timeout, rate_limited, redirect_refused, tls, bad_response, http_status",
  )
  last_sync_status: string | null;
  @Required() @Description("networks known") networks: number;
  @Required() @Description("devices known") devices: number;
  @Required() @Description("devices that are nodes here now (imported or linked)") devices_as_nodes: number;
  @Required() @Format("date-time") created_at: string;
}

export class NetworkView {
  @Required() network_id: string;
  @Required() name: string;
  @Required() @Description("devices of watched networks are imported (new networks are watched)") watched: boolean;
  @Required() @Description("devices the platform lists in it") devices: number;
}

@AdditionalProperties(false)
export class NetworkWatchBody {
  @Required() @Property(Boolean) watched: boolean;
}
