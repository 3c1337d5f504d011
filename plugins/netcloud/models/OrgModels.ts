import { AdditionalProperties, Description, Enum, Example, Format, MaxLength, MinLength, Nullable, Optional, Property, Required } from "@tsed/schema";

/** The spec's discovery body: a typed key or a stored credential (never both), and optionally the platform's base URL. */
@AdditionalProperties(false)
@Description("Body of POST /netcloud/orgs/discover: a typed key or a stored credential, never both.")
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

@Description("A netcloud organization the key can reach (POST /netcloud/orgs/discover).")
export class DiscoveredOrg {
  @Required() @Description("the platform's organization id") id: string;
  @Description("The organization's name on the platform") @Required() name: string;
  @Required() @Description("true when the organization is monitored here already, under any key") already_added: boolean;
}

/** Adds an organization: the discovery body plus the organization's id (as discovery answered it). */
@AdditionalProperties(false)
@Description("Body of POST /netcloud/orgs: the discovery body plus the organization's id.")
export class OrgAddBody extends DiscoverBody {
  @Required() @MinLength(1) @MaxLength(255) @Description("the platform's organization id (the id discovery answers)") org_id: string;
}

@Description("Answer of POST /netcloud/orgs: the organization row created, or that it was already monitored.")
export class OrgAdded {
  @Required() @Format("uuid") @Description("the organization row (the existing one when skipped)") id: string;
  @Required() @Description("true when the organization was monitored here already: nothing was changed") skipped: boolean;
}

/** The spec's import settings. max_devices is checked by the service (400 invalid_max_devices, not validation_failed). */
@AdditionalProperties(false)
@Description("Body of PUT /netcloud/orgs/{id}/import-settings: the spec's netcloud import settings.")
export class ImportSettingsBody {
  @Required() @Description("import the devices of watched networks as nodes at each sync") import_devices: boolean;
  @Required() @Description("file imported devices into the folder whose IP range holds their address") file_by_prefix: boolean;
  @Optional()
  @Nullable(Number)
  @Description("1 to 50000 devices this organization may bring in (nodes still standing); null = no cap; absent keeps the current value")
  max_devices?: number | null;
}

@Description("A monitored netcloud organization with its import settings and last sync (GET /netcloud/orgs).")
export class OrgView {
  @Required() @Format("uuid") id: string;
  @Required() @Description("the platform's organization id") org_id: string;
  @Description("The organization's name on the platform") @Required() name: string;
  @Description("The platform's base URL used for this organization") @Required() base_url: string;
  @Required() @Enum("api_key", "credential") @Description("a typed key (sealed here, never answered) or a stored credential") key_source: string;
  @Description("The stored credential when key_source is credential; null otherwise") @Required() @Nullable(String) @Format("uuid") credential_id:
    string | null;
  @Description("Devices of watched networks are imported as nodes at each sync") @Required() import_devices: boolean;
  @Description("Imported devices are filed into the folder whose IP range holds their address") @Required() file_by_prefix: boolean;
  @Description("Most devices this organization may bring in (nodes still standing); null = no cap") @Required() @Nullable(Number) max_devices: number | null;
  @Description("When the last sync ended; null = never synced") @Required() @Nullable(String) @Format("date-time") last_sync_at: string | null;
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

@Description("A network of a netcloud organization and whether its devices are imported (GET /netcloud/orgs/{id}/networks).")
export class NetworkView {
  @Description("The platform's network id") @Required() network_id: string;
  @Description("The network's name on the platform") @Required() name: string;
  @Required() @Description("devices of watched networks are imported (new networks are watched)") watched: boolean;
  @Required() @Description("devices the platform lists in it") devices: number;
}

@AdditionalProperties(false)
@Description("Body of PUT /netcloud/orgs/{id}/networks/{network_id}: watch the network or not.")
export class NetworkWatchBody {
  @Description("true: import the network's devices; false: its devices are not imported") @Required() @Property(Boolean) watched: boolean;
}
