import { AdditionalProperties, CollectionOf, Description, Enum, Format, MaxLength, MinLength, Optional, Pattern, Property, Required } from "@tsed/schema";
import { PageQuery } from "../../../core/index.js";

export const CREDENTIAL_KINDS = ["snmp_v2c", "snmp_v3", "netcloud_api", "http"] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export const SNMP_V3_LEVELS = ["noAuthNoPriv", "authNoPriv", "authPriv"] as const;
export type SnmpV3Level = (typeof SNMP_V3_LEVELS)[number];
export const SNMP_V3_AUTH_PROTOCOLS = ["MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512"] as const;
export const SNMP_V3_PRIV_PROTOCOLS = ["DES", "AES", "AES192", "AES256"] as const;
export const HTTP_MODES = ["basic", "bearer"] as const;

/** Fields whose values are sealed at rest and never answered. */
export const SECRET_FIELDS = ["community", "auth_key", "priv_key", "api_key", "password", "token"] as const;
export type SecretField = (typeof SECRET_FIELDS)[number];
export type CredentialSecrets = Partial<Record<SecretField, string>>;

/** The query of GET /credentials: a page, optionally of one kind. */
export class CredentialListQuery extends PageQuery {
  @Enum(...CREDENTIAL_KINDS) kind?: CredentialKind;
}

/**
 * Create and full replacement (PUT) of a credential: `name`, `kind` and the fields of
 * that kind. On PUT an omitted secret keeps the stored one (same kind only).
 */
@AdditionalProperties(false)
@Description("Body of POST /credentials and of the full-document PUT /credentials/{id}: the kind and its fields.")
export class CredentialBody {
  @Required()
  @MinLength(1)
  @MaxLength(200)
  @Pattern(/\S/)
  @Description("Unique, case-insensitively")
  name: string;

  @Description("snmp_v2c, snmp_v3, netcloud_api or http; decides which other fields apply")
  @Required()
  @Enum(...CREDENTIAL_KINDS)
  kind: CredentialKind;

  @Optional()
  @MinLength(1)
  @MaxLength(255)
  @Description("snmp_v2c: community string (secret)")
  community?: string;

  @Optional()
  @MinLength(1)
  @MaxLength(32)
  @Description("snmp_v3: USM user name")
  user?: string;

  @Optional()
  @Enum(...SNMP_V3_LEVELS)
  @Description("snmp_v3: authNoPriv needs auth_protocol and auth_key; authPriv also priv_protocol and priv_key")
  security_level?: SnmpV3Level;

  @Optional()
  @Enum(...SNMP_V3_AUTH_PROTOCOLS)
  @Description("snmp_v3 (authNoPriv, authPriv)")
  auth_protocol?: (typeof SNMP_V3_AUTH_PROTOCOLS)[number];

  @Optional()
  @MinLength(8)
  @MaxLength(256)
  @Description("snmp_v3 (authNoPriv, authPriv): authentication passphrase, 8 or more characters (secret)")
  auth_key?: string;

  @Optional()
  @Enum(...SNMP_V3_PRIV_PROTOCOLS)
  @Description("snmp_v3 (authPriv)")
  priv_protocol?: (typeof SNMP_V3_PRIV_PROTOCOLS)[number];

  @Optional()
  @MinLength(8)
  @MaxLength(256)
  @Description("snmp_v3 (authPriv): privacy passphrase, 8 or more characters (secret)")
  priv_key?: string;

  @Optional()
  @MinLength(1)
  @MaxLength(1024)
  @Description("netcloud_api: API key (secret)")
  api_key?: string;

  @Optional()
  @Enum(...HTTP_MODES)
  @Description("http: basic needs username and password; bearer needs token")
  mode?: (typeof HTTP_MODES)[number];

  @Optional()
  @MinLength(1)
  @MaxLength(255)
  @Description("http (basic)")
  username?: string;

  @Optional()
  @MinLength(1)
  @MaxLength(1024)
  @Description("http (basic): password (secret)")
  password?: string;

  @Optional()
  @MinLength(1)
  @MaxLength(4096)
  @Description("http (bearer): token (secret)")
  token?: string;
}

/** The non-secret part of a credential; which fields are present depends on the kind. */
@Description("The non-secret settings of a credential; which fields are present depends on its kind.")
export class CredentialSettings {
  @Optional()
  @Description("snmp_v3")
  user?: string;

  @Optional()
  @Enum(...SNMP_V3_LEVELS)
  @Description("snmp_v3")
  security_level?: SnmpV3Level;

  @Optional()
  @Enum(...SNMP_V3_AUTH_PROTOCOLS)
  @Description("snmp_v3 (authNoPriv, authPriv)")
  auth_protocol?: string;

  @Optional()
  @Enum(...SNMP_V3_PRIV_PROTOCOLS)
  @Description("snmp_v3 (authPriv)")
  priv_protocol?: string;

  @Optional()
  @Enum(...HTTP_MODES)
  @Description("http")
  mode?: string;

  @Optional()
  @Description("http (basic)")
  username?: string;
}

export type CredentialSettingsValue = Partial<Record<keyof CredentialSettings, string>>;

/** A credential as answered: never a secret value, only whether secrets are stored. */
@Description("A credential as answered: its non-secret settings and whether secrets are stored, never a secret (GET /credentials).")
export class CredentialView {
  @Required()
  @Format("uuid")
  id: string;

  @Required()
  name: string;

  @Description("snmp_v2c, snmp_v3, netcloud_api or http; decides which settings and secrets apply")
  @Required()
  @Enum(...CREDENTIAL_KINDS)
  kind: CredentialKind;

  @Required()
  @Property(CredentialSettings)
  settings: CredentialSettingsValue;

  @Required()
  @Description("Whether sealed secrets are stored (false only for snmp_v3 noAuthNoPriv)")
  has_secret: boolean;

  @Required()
  @CollectionOf(String)
  @Description("Names of the secret fields stored, for example [auth_key, priv_key]; their values are never answered")
  secret_fields: SecretField[];

  @Required()
  @Format("date-time")
  created_at: string;

  @Required()
  @Format("date-time")
  updated_at: string;
}

/** What CredentialService.reveal answers to the plugin's own services (never over HTTP). */
export interface RevealedCredential {
  id: string;
  name: string;
  kind: CredentialKind;
  settings: CredentialSettingsValue;
  secrets: CredentialSecrets;
}
