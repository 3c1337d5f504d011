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

export const POLL_INTERVAL_DEFAULT = 300;

/** Create and full replacement (PUT) of a device profile: omitted optional fields take their defaults. */
@AdditionalProperties(false)
@Description("Body of POST /profiles and of the full-document PUT /profiles/{id}.")
export class ProfileBody {
  @Required()
  @MinLength(1)
  @MaxLength(200)
  @Pattern(/\S/)
  @Description("Unique, case-insensitively; at least one non-blank character")
  name: string;

  @Optional()
  @Nullable(String)
  @MaxLength(100)
  @Description("Free-form grouping, for example switch, router, firewall")
  category?: string | null;

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description("Profile this one refines; must exist and must not make a cycle")
  parent_id?: string | null;

  @Description("Vendor of the devices it describes; null = none given")
  @Optional()
  @Nullable(String)
  @MaxLength(200)
  vendor?: string | null;

  @Optional()
  @Integer()
  @Minimum(10)
  @Maximum(86400)
  @Default(POLL_INTERVAL_DEFAULT)
  @Description("Seconds between polls of a node with this profile")
  poll_interval_secs?: number;
}

@Description("A device profile as answered (GET /profiles, GET /profiles/{id}).")
export class ProfileView {
  @Required()
  @Format("uuid")
  id: string;

  @Required()
  name: string;

  @Description("Free-form grouping, for example switch, router, firewall")
  @Required()
  @Nullable(String)
  category: string | null;

  @Description("Profile this one refines; null = none")
  @Required()
  @Nullable(String)
  @Format("uuid")
  parent_id: string | null;

  @Description("Vendor of the devices it describes; null = none given")
  @Required()
  @Nullable(String)
  vendor: string | null;

  @Description("Seconds between polls of a node with this profile")
  @Required()
  @Integer()
  poll_interval_secs: number;

  @Required()
  @Format("date-time")
  created_at: string;

  @Required()
  @Format("date-time")
  updated_at: string;
}
