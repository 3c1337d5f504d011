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

export class SessionCreated {
  @Required()
  @Description("Bearer token for this session; shown once")
  token: string;

  @Required()
  @Format("date-time")
  expires_at: string;
}

export class Identity {
  @Required()
  @Enum("session", "token")
  @Nullable(String)
  @Description('"session" for a person, "token" for an API token')
  kind: "session" | "token" | null;

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

export class AccountView {
  @Required()
  @Format("uuid")
  id: string;

  @Required()
  username: string;

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
export class AccountCreate {
  @Required()
  @MinLength(1)
  @MaxLength(64)
  @Pattern(/^[A-Za-z0-9._@-]+$/)
  @Description("Letters, digits and . _ @ -; unique, case-insensitive")
  username: string;

  @Required()
  @MinLength(8)
  @MaxLength(1024)
  password: string;

  @Required()
  @Enum(...ROLES)
  role: Role;

  @Any("string", "object")
  @Description(`${SCOPE_DOC}; default "All"`)
  scope?: Scope;
}

@AdditionalProperties(false)
export class AccountUpdate {
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
export class TokenCreate {
  @Required()
  @MinLength(1)
  @MaxLength(120)
  name: string;

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

export class TokenCreated {
  @Required()
  @Format("uuid")
  id: string;

  @Required()
  @Description("The bearer token; shown once, stored hashed")
  token: string;
}

export class TokenView {
  @Required()
  @Format("uuid")
  id: string;

  @Required()
  name: string;

  @Required()
  @Enum(...ROLES)
  role: Role;

  @Required()
  @Any("string", "object")
  scope: Scope;

  @Required()
  @Format("date-time")
  created_at: string;

  @Required()
  @Nullable(String)
  @Format("date-time")
  expires_at: string | null;

  @Required()
  @Nullable(String)
  @Format("date-time")
  last_used_at: string | null;
}
