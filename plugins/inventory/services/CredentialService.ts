import { Inject, Injectable } from "@tsed/di";
import { badRequest, conflict, decodeCursor, isPgError, isUuid, notFound, page, PG_ERROR } from "../../../core/index.js";
import type {
  CredentialBody,
  CredentialKind,
  CredentialSecrets,
  CredentialSettings,
  CredentialSettingsValue,
  CredentialView,
  RevealedCredential,
  SecretField,
} from "../models/CredentialModels.js";
import type { Credentials } from "../contract.js";
import { CredentialRepository, type CredentialRow } from "../repositories/CredentialRepository.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

type SettingField = keyof CredentialSettings;

/** Which non-secret and secret fields a credential of this kind (and SNMPv3 level or HTTP mode) carries. */
interface Layout {
  settings: SettingField[];
  secrets: SecretField[];
}

function layoutOf(kind: CredentialKind, settings: CredentialSettingsValue): Layout {
  switch (kind) {
    case "snmp_v2c":
      return { settings: [], secrets: ["community"] };
    case "netcloud_api":
      return { settings: [], secrets: ["api_key"] };
    case "snmp_v3": {
      const auth = settings.security_level === "authNoPriv" || settings.security_level === "authPriv";
      const priv = settings.security_level === "authPriv";
      return {
        settings: ["user", "security_level", ...(auth ? (["auth_protocol"] as const) : []), ...(priv ? (["priv_protocol"] as const) : [])],
        secrets: [...(auth ? (["auth_key"] as const) : []), ...(priv ? (["priv_key"] as const) : [])],
      };
    }
    case "http":
      return settings.mode === "basic" ? { settings: ["mode", "username"], secrets: ["password"] } : { settings: ["mode"], secrets: ["token"] };
  }
}

/** The fields of a body beyond name and kind that were sent. */
const KIND_FIELDS: readonly (SettingField | SecretField)[] = [
  "community",
  "user",
  "security_level",
  "auth_protocol",
  "auth_key",
  "priv_protocol",
  "priv_key",
  "api_key",
  "mode",
  "username",
  "password",
  "token",
];

function describe(kind: CredentialKind, settings: CredentialSettingsValue): string {
  if (kind === "snmp_v3" && settings.security_level) return `snmp_v3 with security_level ${settings.security_level}`;
  if (kind === "http" && settings.mode) return `http with mode ${settings.mode}`;
  return kind;
}

/**
 * Credentials for polling and integrations. Secret fields are sealed together into
 * secret_sealed and never answered; other services of this plugin read them through reveal().
 */
@Injectable()
export class CredentialService implements Credentials {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  @Inject(CredentialRepository)
  private repo: CredentialRepository;

  async list(limit: number, cursor: string | undefined, kind: CredentialKind | undefined): Promise<{ rows: CredentialView[]; next: string | null }> {
    let after: { key: string; id: string } | null = null;
    if (cursor !== undefined) {
      const [key, id] = decodeCursor(cursor, 2, ([, last]) => isUuid(last));
      after = { key, id };
    }
    const found = await this.repo.list(limit + 1, after, kind ?? null);
    const { rows, next } = page(found, limit, (r) => [r.sort_key, r.id]);
    return { rows: rows.map((r) => this.toView(r)), next };
  }

  async get(id: string): Promise<CredentialView> {
    const found = await this.repo.get(id);
    if (!found) throw notFound("No such credential.");
    return this.toView(found);
  }

  async create(body: CredentialBody): Promise<string> {
    const { settings, secrets } = this.shape(body, null);
    return this.write(() => this.repo.insert({ name: body.name, kind: body.kind, settings, secret_sealed: this.seal(secrets) }));
  }

  /** Full replacement; a secret field left out keeps the stored value when the kind stays the same. */
  async replace(id: string, body: CredentialBody): Promise<CredentialView> {
    return this.ctx.store.tx(async (db) => {
      const stored = await this.repo.sealed(id, db, true);
      if (!stored) throw notFound("No such credential.");
      const { settings, secrets } = this.shape(body, stored);
      await this.write(() => this.repo.update(id, { name: body.name, kind: body.kind, settings, secret_sealed: this.seal(secrets) }, db));
      return this.toView((await this.repo.get(id, db)) as CredentialRow);
    });
  }

  /** Refused (409 credential_in_use) while a node or a URL check names it. */
  async remove(id: string): Promise<void> {
    await this.ctx.store.tx(async (db) => {
      // The row lock makes concurrent inserts that reference the credential wait for this decision.
      if (!(await this.repo.sealed(id, db, true))) throw notFound("No such credential.");
      const refs = await this.repo.references(id, db);
      if (refs.nodes || refs.url_checks) {
        const uses = [refs.nodes ? `${refs.nodes} node(s)` : null, refs.url_checks ? `${refs.url_checks} URL check(s)` : null].filter(Boolean);
        throw conflict("credential_in_use", `The credential is still used by ${uses.join(" and ")}; point them elsewhere first.`);
      }
      try {
        await this.repo.delete(id, db);
      } catch (err) {
        if (isPgError(err, PG_ERROR.foreignKeyViolation)) {
          throw conflict("credential_in_use", "The credential is still in use; point its users elsewhere first.");
        }
        throw err;
      }
    });
  }

  /**
   * The credential with its secrets unsealed, for this plugin's own services (polling,
   * integrations); null when there is no such credential. Never expose the result over HTTP
   * and never log it.
   */
  async reveal(id: string): Promise<RevealedCredential | null> {
    if (!isUuid(id)) return null;
    const row = await this.repo.sealed(id);
    if (!row) return null;
    return { id, name: row.name, kind: row.kind, settings: row.settings, secrets: this.unseal(row.secret_sealed) };
  }

  /** Splits a body into settings and secrets, checking that the kind's fields (and only they) are there. */
  private shape(
    body: CredentialBody,
    stored: { kind: CredentialKind; secret_sealed: string | null } | null,
  ): { settings: CredentialSettingsValue; secrets: CredentialSecrets } {
    const sent = body as unknown as Record<string, string | undefined>;
    if (body.kind === "snmp_v3" && body.security_level === undefined) {
      throw badRequest("validation_failed", "An snmp_v3 credential needs security_level (noAuthNoPriv, authNoPriv or authPriv).");
    }
    if (body.kind === "http" && body.mode === undefined) throw badRequest("validation_failed", "An http credential needs mode (basic or bearer).");
    const layout = layoutOf(body.kind, { security_level: body.security_level, mode: body.mode });
    const what = describe(body.kind, { security_level: body.security_level, mode: body.mode });

    const allowed = new Set<string>([...layout.settings, ...layout.secrets]);
    const foreign = KIND_FIELDS.filter((f) => sent[f] !== undefined && !allowed.has(f));
    if (foreign.length) throw badRequest("validation_failed", `A credential of kind ${what} does not take ${foreign.join(", ")}.`);

    const settings: CredentialSettingsValue = {};
    const missingSettings: string[] = [];
    for (const f of layout.settings) {
      const value = sent[f];
      if (value === undefined) missingSettings.push(f);
      else settings[f] = value;
    }
    if (missingSettings.length) throw badRequest("validation_failed", `A credential of kind ${what} needs ${missingSettings.join(", ")}.`);

    const secrets: CredentialSecrets = {};
    let kept: CredentialSecrets | null = null;
    const missingSecrets: string[] = [];
    for (const f of layout.secrets) {
      let value = sent[f];
      if (value === undefined && stored && stored.kind === body.kind) {
        kept ??= this.unseal(stored.secret_sealed);
        value = kept[f];
      }
      if (value === undefined) missingSecrets.push(f);
      else secrets[f] = value;
    }
    if (missingSecrets.length) {
      const changing = stored !== null && stored.kind !== body.kind;
      throw badRequest(
        "validation_failed",
        changing
          ? `Changing the kind to ${body.kind} needs that kind's secrets: ${missingSecrets.join(", ")}.`
          : `A credential of kind ${what} needs ${missingSecrets.join(", ")}.`,
      );
    }
    return { settings, secrets };
  }

  private seal(secrets: CredentialSecrets): string | null {
    return Object.keys(secrets).length ? this.ctx.secrets.seal(JSON.stringify(secrets)) : null;
  }

  private unseal(sealed: string | null): CredentialSecrets {
    return sealed ? (JSON.parse(this.ctx.secrets.unseal(sealed)) as CredentialSecrets) : {};
  }

  private toView(row: CredentialRow): CredentialView {
    return {
      id: row.id,
      name: row.name,
      kind: row.kind,
      settings: row.settings,
      has_secret: row.has_secret,
      secret_fields: row.has_secret ? layoutOf(row.kind, row.settings).secrets : [],
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  private async write<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isPgError(err, PG_ERROR.uniqueViolation)) {
        throw conflict("name_taken", "A credential with this name already exists (names are compared case-insensitively).");
      }
      throw err;
    }
  }
}
