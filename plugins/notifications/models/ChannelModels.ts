import { AdditionalProperties, CollectionOf, Description, Enum, MaxLength, MinLength, Nullable, Optional, Property, Required } from "@tsed/schema";

/** The query of GET /notification-channels/builtin-template: which channel kind. */
export class BuiltinTemplateQuery {
  @MaxLength(64) kind: string = "webhook";
}

export class TemplateItemBody {
  @Required() @MinLength(1) @MaxLength(16384) @Description("liquid template of the subject") subject: string;
  @Optional() @Nullable(String) @MaxLength(16384) @Description("liquid template of the body; null = the kind's built-in body") body?: string | null;
}

@AdditionalProperties(false)
export class ChannelTemplate {
  @Optional() fire?: TemplateItemBody;
  @Optional() resolve?: TemplateItemBody;
  @Optional() suppress?: TemplateItemBody;
}

@AdditionalProperties(false)
export class ChannelCreate {
  @Required() @MinLength(1) @MaxLength(200) name: string;
  @Required() @MinLength(1) @MaxLength(64) @Description("a registered channel kind: webhook, email, pager, servicedesk, or one a plugin adds") kind: string;
  @Required()
  @Description("the kind's config (GET /notification-channels/kinds lists each kind's schema); secret fields are write-only")
  config: Record<string, unknown>;
  @Optional() @Description("overrides of the kind's built-in templates, per lifecycle point") template?: ChannelTemplate;
  @Optional() enabled?: boolean;
}

@AdditionalProperties(false)
export class ChannelPatch {
  @Optional() @MinLength(1) @MaxLength(200) name?: string;
  @Optional() @Description("the whole config; an omitted secret field keeps the stored one") config?: Record<string, unknown>;
  @Optional() @Nullable(ChannelTemplate) @Description("replaces the template overrides; null = the built-in templates") template?: ChannelTemplate | null;
}

@AdditionalProperties(false)
export class ChannelEnabledBody {
  @Required() enabled: boolean;
}

export class ChannelView {
  @Required() id: string;
  @Required() name: string;
  @Required() kind: string;
  @Required() enabled: boolean;
  @Required() @Description("the config without its secret fields") config: Record<string, unknown>;
  @Required() @CollectionOf(String) @Description("the kind's secret fields that hold a value (the values are never answered)") secrets_set: string[];
  @Required() template: ChannelTemplate;
  @Required() created_at: string;
  @Required() updated_at: string;
}

export class ChannelTestResult {
  @Required() delivered: boolean;
  @Property()
  @Nullable(Boolean)
  @Description("whether the incident the test opened was closed again; null for kinds with no incident, and when delivery failed")
  closed: boolean | null;
  @Property() @Nullable(String) @Description("the first failure as the channel reported it; never the channel URL") error: string | null;
}

export const LIFECYCLE = ["fire", "resolve", "suppress"] as const;

export class BuiltinTemplateItem {
  @Required() @Enum(...LIFECYCLE) event: string;
  @Required() subject: string;
  @Property() @Nullable(String) @Description("null for webhook and pager: their built-in body is the whole alert as JSON") body: string | null;
}

export class ChannelKindView {
  @Required() kind: string;
  @Required() description: string;
  @Required() config_schema: Record<string, unknown>;
  @Required() @CollectionOf(String) secret_fields: string[];
  @Required() opens_incidents: boolean;
}
