import {
  AdditionalProperties,
  Default,
  Description,
  Format,
  Integer,
  Maximum,
  MaxLength,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Pattern,
  Required,
} from "@tsed/schema";

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
export const RULE_PRIORITY_DEFAULT = 100;
export const OID_PREFIX_PATTERN = /^\.?[0-9]+(\.[0-9]+)*$/;

/** The query of GET /classification-rules: every rule, or a page of them. */
export class ClassificationRuleListQuery {
  @Integer() @Minimum(1) @Maximum(1000) @Description("Page size; omitted = every rule") limit?: number;
  @MaxLength(2048) cursor?: string;
}

/**
 * Create and full replacement (PUT) of a classification rule. At least one of
 * sysobjectid_prefix and sysdescr_regex must be set.
 */
@AdditionalProperties(false)
@Description("Body of POST /classification-rules and of the full-document PUT /classification-rules/{id}.")
export class ClassificationRuleBody {
  @Optional()
  @Default(true)
  @Description("Disabled rules are skipped; default true")
  enabled?: boolean;

  @Optional()
  @Integer()
  @Minimum(INT32_MIN)
  @Maximum(INT32_MAX)
  @Default(RULE_PRIORITY_DEFAULT)
  @Description("Ascending evaluation order, lowest first; default 100")
  priority?: number;

  @Required()
  @Format("uuid")
  @Description("Profile the rule assigns; must exist")
  profile_id: string;

  @Optional()
  @Nullable(String)
  @MaxLength(512)
  @Pattern(OID_PREFIX_PATTERN)
  @Description("Dotted-OID prefix of sysObjectID (authoritative), for example 1.3.6.1.4.1.9; a leading dot is dropped")
  sysobjectid_prefix?: string | null;

  @Optional()
  @Nullable(String)
  @MinLength(1)
  @MaxLength(500)
  @Description("JavaScript regular expression tried on sysDescr (fallback), at most 500 characters")
  sysdescr_regex?: string | null;

  @Optional()
  @Nullable(String)
  @MaxLength(200)
  @Description("Pre-fill for the import row")
  vendor?: string | null;

  @Optional()
  @Nullable(String)
  @MaxLength(200)
  @Description("Pre-fill for the import row")
  model?: string | null;
}

@Description("A classification rule that picks a device profile from SNMP facts (GET /classification-rules).")
export class ClassificationRuleView {
  @Required()
  @Format("uuid")
  id: string;

  @Description("Disabled rules are skipped")
  @Required()
  enabled: boolean;

  @Description("Ascending evaluation order, lowest first")
  @Required()
  @Integer()
  priority: number;

  @Description("Profile the rule assigns")
  @Required()
  @Format("uuid")
  profile_id: string;

  @Description("Dotted-OID prefix of sysObjectID (authoritative); null = not used")
  @Required()
  @Nullable(String)
  sysobjectid_prefix: string | null;

  @Description("Regular expression tried on sysDescr (fallback); null = not used")
  @Required()
  @Nullable(String)
  sysdescr_regex: string | null;

  @Description("Pre-fill for the import row")
  @Required()
  @Nullable(String)
  vendor: string | null;

  @Description("Pre-fill for the import row")
  @Required()
  @Nullable(String)
  model: string | null;
}
