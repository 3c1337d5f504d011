import { Inject, Injectable } from "@tsed/di";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
// Exported by inventory's manifest (its contract); the class is imported from its file.
import { Credentials } from "../../inventory/contract.js";
import type { DnsCheckSpec, PollTarget, SnmpCredential, UrlCheckSpec } from "../poller/types.js";
import { CollectionTemplateService } from "./CollectionTemplateService.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

interface DirectoryRow {
  id: string;
  name: string;
  address: string;
  effective_pool: string;
  profile_id: string | null;
  snmp_port: number;
  credential_id: string | null;
  poll_interval_secs: number | null;
  url_check: StoredUrlCheck | null;
  dns_check: StoredDnsCheck | null;
}

interface StoredUrlCheck {
  url: string;
  method: string;
  timeout_ms: number;
  follow_redirects: boolean;
  verify_tls: boolean;
  expected_status: UrlCheckSpec["expected_status"];
  body_match: UrlCheckSpec["body_match"];
  body_max_bytes: number;
  json_extract: UrlCheckSpec["json_extract"];
  credential_id: string | null;
}

interface StoredDnsCheck {
  name: string;
  record_type: string;
  resolver_ip: string | null;
  resolver_port: number;
  timeout_ms: number;
  max_depth: number;
}

type Revealed = Awaited<ReturnType<Credentials["reveal"]>>;

/** An inventory credential as the SNMP engine takes it; null for kinds that are not SNMP. */
export function snmpCredentialOf(c: Revealed): SnmpCredential | null {
  if (!c) return null;
  if (c.kind === "snmp_v2c") return { version: "2c", community: c.secrets.community };
  if (c.kind !== "snmp_v3") return null;
  const s = c.settings as Partial<Record<string, string>>;
  return {
    version: "3",
    user: s.user,
    security_level: s.security_level as SnmpCredential["security_level"],
    ...(s.auth_protocol ? { auth_protocol: s.auth_protocol as SnmpCredential["auth_protocol"], auth_key: c.secrets.auth_key } : {}),
    ...(s.priv_protocol ? { priv_protocol: s.priv_protocol as SnmpCredential["priv_protocol"], priv_key: c.secrets.priv_key } : {}),
  };
}

function httpAuthOf(c: Revealed): UrlCheckSpec["auth"] {
  if (!c || c.kind !== "http") return null;
  const s = c.settings as Partial<Record<string, string>>;
  if (s.mode === "basic") return { mode: "basic", username: s.username ?? "", password: c.secrets.password ?? "" };
  if (s.mode === "bearer") return { mode: "bearer", token: c.secrets.token ?? "" };
  return null;
}

/**
 * The assignment of a pool: what its poller must poll, built from inventory's published
 * directory (effective pool, address, profile), its Credentials token (secrets) and
 * the collection templates of each node's profile.
 * The result carries secrets: it goes to a poller (embedded, or remote over a ManageSystem
 * route), never into a log or another answer.
 */
@Injectable()
export class AssignmentService {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  @Inject(Credentials)
  private credentials: Credentials;

  @Inject(CollectionTemplateService)
  private templates: CollectionTemplateService;

  async targets(pool: string): Promise<PollTarget[]> {
    // The directory publishes what a poller needs: SNMP port, credential reference, the profile's
    // interval, and the URL and DNS checks as stored (no secrets: those come from reveal()).
    const { rows } = await this.ctx.store.query<DirectoryRow>(
      `SELECT d.id, d.name, host(d.address) AS address, d.effective_pool, d.profile_id,
              d.snmp_port, d.credential_id, d.poll_interval_secs, d.url_check, d.dns_check
         FROM ${NODE_DIRECTORY_VIEW} d WHERE d.effective_pool = $1 ORDER BY d.id`,
      [pool],
    );
    const revealed = new Map<string, Promise<Revealed>>();
    const reveal = (id: string | null | undefined): Promise<Revealed> => {
      if (!id) return Promise.resolve(null);
      const known = revealed.get(id);
      if (known) return known;
      const p = this.credentials.reveal(id);
      revealed.set(id, p);
      return p;
    };
    const templates = await this.templates.templatesForProfiles(rows.map((r) => r.profile_id).filter((id): id is string => id !== null));
    const out: PollTarget[] = [];
    for (const r of rows) {
      const snmp = snmpCredentialOf(await reveal(r.credential_id));
      out.push({
        node_id: r.id,
        name: r.name,
        address: r.address,
        snmp_port: r.snmp_port,
        pool: r.effective_pool,
        interval_secs: r.poll_interval_secs ?? this.ctx.config.defaultIntervalSecs,
        snmp,
        templates: (r.profile_id && templates.get(r.profile_id)) || [],
        url_check: r.url_check ? await this.urlSpec(r.url_check, reveal) : null,
        dns_check: r.dns_check ? dnsSpec(r.dns_check) : null,
      });
    }
    return out;
  }

  private async urlSpec(c: StoredUrlCheck, reveal: (id: string | null) => Promise<Revealed>): Promise<UrlCheckSpec> {
    return {
      url: c.url,
      method: c.method,
      timeout_ms: c.timeout_ms,
      follow_redirects: c.follow_redirects,
      verify_tls: c.verify_tls,
      expected_status: c.expected_status,
      body_match: c.body_match,
      body_max_bytes: c.body_max_bytes,
      json_extract: c.json_extract ?? [],
      auth: httpAuthOf(await reveal(c.credential_id)),
    };
  }
}

function dnsSpec(c: StoredDnsCheck): DnsCheckSpec {
  return {
    name: c.name,
    record_type: c.record_type,
    resolver_ip: c.resolver_ip,
    resolver_port: c.resolver_port,
    timeout_ms: c.timeout_ms,
    max_depth: c.max_depth,
  };
}
