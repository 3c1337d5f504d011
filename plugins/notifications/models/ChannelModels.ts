import { AdditionalProperties, CollectionOf, Description, Enum, MaxLength, MinLength, Nullable, Optional, Property, Required } from "@tsed/schema";

/** The query of GET /notification-channels/builtin-template: which channel kind. */
export class BuiltinTemplateQuery {
  @MaxLength(64) kind: string = "webhook";
}

@Description("A channel's subject and body for one lifecycle point.")
export class TemplateItemBody {
  @Required() @MinLength(1) @MaxLength(16384) @Description("liquid template of the subject") subject: string;
  @Optional() @Nullable(String) @MaxLength(16384) @Description("liquid template of the body; null = the kind's built-in body") body?: string | null;
}

@AdditionalProperties(false)
@Description("A channel's own subject and body per lifecycle point; an absent point uses the built-in template.")
export class ChannelTemplate {
  @Optional() fire?: TemplateItemBody;
  @Optional() resolve?: TemplateItemBody;
  @Optional() suppress?: TemplateItemBody;
}

@AdditionalProperties(false)
@Description("Body of POST /notification-channels.")
export class ChannelCreate {
  @Description("Shown name of the channel") @Required() @MinLength(1) @MaxLength(200) name: string;
  @Required() @MinLength(1) @MaxLength(64) @Description("a registered channel kind: webhook, email, pager, servicedesk, or one a plugin adds") kind: string;
  @Required()
  @Description("the kind's config (GET /notification-channels/kinds lists each kind's schema); secret fields are write-only")
  config: Record<string, unknown>;
  @Optional() @Description("overrides of the kind's built-in templates, per lifecycle point") template?: ChannelTemplate;
  @Description("default true") @Optional() enabled?: boolean;
}

@AdditionalProperties(false)
@Description("Body of PATCH /notification-channels/{id}: the fields to change.")
export class ChannelPatch {
  @Description("Shown name of the channel") @Optional() @MinLength(1) @MaxLength(200) name?: string;
  @Optional() @Description("the whole config; an omitted secret field keeps the stored one") config?: Record<string, unknown>;
  @Optional() @Nullable(ChannelTemplate) @Description("replaces the template overrides; null = the built-in templates") template?: ChannelTemplate | null;
}

@AdditionalProperties(false)
@Description("Body of PUT /notification-channels/{id}: enable or disable the channel.")
export class ChannelEnabledBody {
  @Description("true enables the channel, false disables it") @Required() enabled: boolean;
}

@Description("A notification channel without its secret values (GET /notification-channels).")
export class ChannelView {
  @Required() id: string;
  @Required() name: string;
  @Description("Channel kind: webhook, email, pager, servicedesk, or one a plugin adds") @Required() kind: string;
  @Description("Disabled channels get no deliveries") @Required() enabled: boolean;
  @Required() @Description("the config without its secret fields") config: Record<string, unknown>;
  @Required() @CollectionOf(String) @Description("the kind's secret fields that hold a value (the values are never answered)") secrets_set: string[];
  @Required() template: ChannelTemplate;
  @Required() created_at: string;
  @Required() updated_at: string;
}

@Description("The spec's notification channel test result (POST /notification-channels/{id}/test).")
export class ChannelTestResult {
  @Description("Whether the test notification was delivered") @Required() delivered: boolean;
  @Property()
  @Nullable(Boolean)
  @Description("whether the incident the test opened was closed again; null for kinds with no incident, and when delivery failed")
  closed: boolean | null;
  @Property() @Nullable(String) @Description("the first failure as the channel reported it; never the channel URL") error: string | null;
}

export const LIFECYCLE = ["fire", "resolve", "suppress"] as const;

@Description("The built-in subject and body of one lifecycle point (GET /notification-channels/builtin-template).")
export class BuiltinTemplateItem {
  @Description("Lifecycle point: fire, resolve or suppress") @Required() @Enum(...LIFECYCLE) event: string;
  @Description("Template of the subject") @Required() subject: string;
  @Property() @Nullable(String) @Description("null for webhook and pager: their built-in body is the whole alert as JSON") body: string | null;
}

@Description("A notification channel kind and the configuration it takes (GET /notification-channels/kinds).")
export class ChannelKindView {
  @Description("Kind name, for example webhook, email, pager, servicedesk") @Required() kind: string;
  @Description("What the kind sends and where") @Required() description: string;
  @Description("JSON schema of a channel's config, secret fields included") @Required() config_schema: Record<string, unknown>;
  @Description("Config fields that are secrets: sealed at rest, never answered, kept when omitted on update")
  @Required()
  @CollectionOf(String)
  secret_fields: string[];
  @Description("True when a send opens an incident on the far side (pager, servicedesk): a test send closes it again") @Required() opens_incidents: boolean;
}
