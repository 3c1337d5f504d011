import { Inject, Injectable } from "@tsed/di";
import type { Agent } from "undici";
import { ApiError, badRequest, isUuid } from "../../../core/index.js";
import { Credentials } from "../../inventory/contract.js";
import { NETCLOUD_CONTEXT, type NetcloudContext } from "../context.js";
import { checkBaseUrl, NetcloudClient, NetcloudError, netcloudAgent } from "../lib/client.js";

/** The key a request names: typed (sealed before it is stored) or a stored credential's. */
export interface NamedKey {
  apiKey: string;
  credentialId: string | null;
}

/** What each failure kind answers on the API (502-class; the detail goes to the log only). */
const ANSWERS: Record<NetcloudError["kind"], { status: number; code: string; message: string }> = {
  key_refused: { status: 502, code: "upstream_key_refused", message: "The netcloud platform refused the API key." },
  not_found: { status: 502, code: "upstream_failed", message: "The netcloud platform does not know this organization under this key." },
  unreachable: { status: 502, code: "upstream_failed", message: "The netcloud platform could not be reached." },
  timeout: { status: 504, code: "upstream_timeout", message: "The netcloud platform did not answer in time." },
  rate_limited: { status: 502, code: "upstream_failed", message: "The netcloud platform is rate-limiting this key; try again later." },
  redirect_refused: { status: 502, code: "upstream_failed", message: "The netcloud platform redirected to another host; the request was not followed." },
  tls: { status: 502, code: "upstream_failed", message: "The netcloud platform's TLS certificate is not trusted." },
  bad_response: { status: 502, code: "upstream_failed", message: "The netcloud platform gave an answer that could not be read." },
  http_status: { status: 502, code: "upstream_failed", message: "The netcloud platform answered with an error." },
};

/**
 * What talks to the platform: the base URL's checks (https, allow-list), the key a request or an organization names
 * (typed, or a stored credential unsealed through inventory's contract), one undici agent for every client, and the
 * mapping of a failure to its 502-class answer (detail logged, never answered).
 */
@Injectable()
export class UpstreamService {
  @Inject(NETCLOUD_CONTEXT)
  private ctx: NetcloudContext;

  @Inject(Credentials)
  private credentials: Credentials;

  private agent: Agent | null = null;

  /** A base URL as used, or 400 invalid_base_url (the message never echoes the URL). */
  baseUrl(raw: string | null | undefined): URL {
    const given = raw ?? this.ctx.config.defaultBaseUrl;
    const url = checkBaseUrl(given, this.ctx.config.allowedHosts);
    if (typeof url === "string") throw badRequest("invalid_base_url", url);
    return url;
  }

  /** The key of a discovery or add body: exactly one of api_key and credential_id (the spec's 400s). */
  async namedKey(body: { api_key?: string | null; credential_id?: string | null }): Promise<NamedKey> {
    const typed = body.api_key ?? null;
    const credentialId = body.credential_id ?? null;
    if (typed !== null && credentialId !== null) throw badRequest("invalid_request", "Send api_key or credential_id, not both.");
    if (credentialId !== null) {
      const apiKey = await this.credentialKey(credentialId);
      if (apiKey === null) throw badRequest("invalid_credential", "credential_id names no stored netcloud_api credential.");
      return { apiKey, credentialId: credentialId.toLowerCase() };
    }
    if (typed === null || typed.trim() === "")
      throw badRequest("invalid_api_key", "Name a key: api_key (typed) or credential_id (a stored netcloud_api credential).");
    return { apiKey: typed.trim(), credentialId: null };
  }

  /** The API key of a stored netcloud_api credential, or null (none, or another kind). */
  async credentialKey(id: string): Promise<string | null> {
    if (!isUuid(id)) return null;
    const c = await this.credentials.reveal(id);
    if (!c || c.kind !== "netcloud_api") return null;
    const key = (c.secrets as Record<string, unknown>).api_key;
    return typeof key === "string" && key !== "" ? key : null;
  }

  client(baseUrl: URL, apiKey: string): NetcloudClient {
    const c = this.ctx.config;
    this.agent ??= netcloudAgent(c.caCertPem ?? null, c.requestTimeoutMs);
    return new NetcloudClient({
      baseUrl,
      apiKey,
      dispatcher: this.agent,
      timeoutMs: c.requestTimeoutMs,
      maxRetryWaitMs: c.maxRetryWaitSecs * 1000,
      maxRetries: c.maxRetries,
      pageSize: c.pageSize,
      maxPages: c.maxPages,
    });
  }

  /** Logs a failed upstream call in detail (kind, status, detail, host; never the key) and answers its 502-class error. */
  failure(err: unknown, what: string, baseUrl: URL): Error {
    if (!(err instanceof NetcloudError)) return err as Error; // a bug of ours: a 500, logged by the kernel
    const e = err;
    this.ctx.log.warn("netcloud: upstream call failed", { call: what, kind: e.kind, status: e.status, detail: e.detail, host: baseUrl.host });
    const a = ANSWERS[e.kind];
    return new ApiError(a.status, a.code, a.message);
  }

  async stop(): Promise<void> {
    const agent = this.agent;
    this.agent = null;
    await agent?.close().catch(() => undefined);
  }
}
