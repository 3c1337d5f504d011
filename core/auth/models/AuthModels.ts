import {
  AdditionalProperties,
  Any,
  Description,
  Enum,
  Format,
  MaxLength,
  MinLength,
  Nullable,
  Optional,
  Pattern,
  Required,
  Integer,
  Minimum,
  Maximum,
} from "@tsed/schema";
import { ROLES, type Role, type Scope } from "../Caller.js";

const SCOPE_DOC = 'Either the string "All" or {"folders": [<folder uuid>, ...]} (1 to 256 distinct ids)';

/** The query of GET /accounts: a page by username, after the last one seen. */
export class AccountListQuery {
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 100;
  @MaxLength(64) after?: string;
}

/** The query of GET /tokens: a page, newest first, before the last one seen. */
export class TokenListQuery {
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 100;
  @Format("date-time") before?: string;
  @Format("uuid") before_id?: string;
}

@Description("Username and password of a login (POST /auth/sessions).")
export class LoginRequest {
  @Required()
  @MinLength(1)
  @MaxLength(64)
  username: string;

  @Required()
  @MinLength(1)
  @MaxLength(1024)
  password: string;
}

@Description("A new login session: its bearer token and expiry (POST /auth/sessions).")
export class SessionCreated {
  @Required()
  @Description("Bearer token for this session; shown once")
  token: string;

  @Description("When the session token stops being accepted")
  @Required()
  @Format("date-time")
  expires_at: string;
}

@Description("Who the caller is: kind, role, scope and name (GET /auth/me).")
export class Identity {
  @Required()
  @Enum("session", "token")
  @Nullable(String)
  @Description('"session" for a person, "token" for an API token')
  kind: "session" | "token" | null;

  @Description("viewer, operator or admin, ordered least to most privileged")
  @Required()
  @Enum(...ROLES)
  role: Role;

  @Required()
  @Any("string", "object")
  @Description(SCOPE_DOC)
  scope: Scope;

  @Required()
  @Description("The account's username, or the API token's name")
  username: string;
}

@Description("An account as answered, without its password (GET /accounts, GET /accounts/{id}).")
export class AccountView {
  @Required()
  @Format("uuid")
  id: string;

  @Required()
  username: string;

  @Description("viewer, operator or admin, ordered least to most privileged")
  @Required()
  @Enum(...ROLES)
  role: Role;

  @Required()
  @Any("string", "object")
  @Description(SCOPE_DOC)
  scope: Scope;

  @Required()
  @Format("date-time")
  created_at: string;

  @Required()
  @Format("date-time")
  updated_at: string;
}

@AdditionalProperties(false)
@Description("Body of POST /accounts: a new account with its role and scope.")
export class AccountCreate {
  @Required()
  @MinLength(1)
  @MaxLength(64)
  @Pattern(/^[A-Za-z0-9._@-]+$/)
  @Description("Letters, digits and . _ @ -; unique, case-insensitive")
  username: string;

  @Description("At least 8 characters")
  @Required()
  @MinLength(8)
  @MaxLength(1024)
  password: string;

  @Description("viewer, operator or admin, ordered least to most privileged")
  @Required()
  @Enum(...ROLES)
  role: Role;

  @Any("string", "object")
  @Description(`${SCOPE_DOC}; default "All"`)
  scope?: Scope;
}

@AdditionalProperties(false)
@Description("Body of PUT /accounts/{id}: the account's role, scope and optionally a new password.")
export class AccountUpdate {
  @Description("viewer, operator or admin, ordered least to most privileged")
  @Required()
  @Enum(...ROLES)
  role: Role;

  @Required()
  @Any("string", "object")
  @Description(SCOPE_DOC)
  scope: Scope;

  @Optional()
  @MinLength(8)
  @MaxLength(1024)
  @Description("New password; omitted keeps the current one")
  password?: string;
}

@AdditionalProperties(false)
@Description("Body of POST /tokens: a new API token's name, role, scope and optional expiry.")
export class TokenCreate {
  @Description("A label for the token; it names no person")
  @Required()
  @MinLength(1)
  @MaxLength(120)
  name: string;

  @Description("Role the token acts with: viewer, operator or admin")
  @Required()
  @Enum(...ROLES)
  role: Role;

  @Any("string", "object")
  @Description(`${SCOPE_DOC}; default "All"`)
  scope?: Scope;

  @Format("date-time")
  @Nullable(String)
  @Description("Optional expiry; omitted = never expires")
  expires_at?: string | null;
}

@Description("A new API token with its secret, shown only once (POST /tokens).")
export class TokenCreated {
  @Required()
  @Format("uuid")
  id: string;

  @Required()
  @Description("The bearer token; shown once, stored hashed")
  token: string;
}

@Description("An API token as answered, without its secret (GET /tokens).")
export class TokenView {
  @Required()
  @Format("uuid")
  id: string;

  @Required()
  name: string;

  @Description("Role the token acts with: viewer, operator or admin")
  @Required()
  @Enum(...ROLES)
  role: Role;

  @Description('Either the string "All" or {"folders": [<folder uuid>, ...]} (1 to 256 distinct ids)')
  @Required()
  @Any("string", "object")
  scope: Scope;

  @Required()
  @Format("date-time")
  created_at: string;

  @Description("null = never expires")
  @Required()
  @Nullable(String)
  @Format("date-time")
  expires_at: string | null;

  @Description("Last time a request authenticated with the token; null = never used")
  @Required()
  @Nullable(String)
  @Format("date-time")
  last_used_at: string | null;
}
