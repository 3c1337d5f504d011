import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, encodeCursor, notFound, requireCaller } from "../../../core/index.js";
import { NOTE_MAX_LENGTH } from "../context.js";
import type { OverlapAckBody, OverlapSite, OverlapView } from "../models/IpamModels.js";
import { OverlapRepository, type OverlapRow } from "../repositories/OverlapRepository.js";

const KEY_PATTERN = /^[0-9a-f]{32}$/;

/**
 * Subnet overlaps (computed in SQL by OverlapRepository) and their acks. An ack stores the sites the overlap spans
 * now; the overlap shows acked only while the sites it spans are all among them, so a site joining reopens it.
 */
@Injectable()
export class OverlapService {
  @Inject(OverlapRepository)
  private repo: OverlapRepository;

  async list(limit: number, cursor?: string): Promise<{ rows: OverlapView[]; next: string | null }> {
    const after = cursor ? decodeCursor(cursor, 1, ([key]) => KEY_PATTERN.test(key))[0] : null;
    const rows = await this.repo.list({ limit: limit + 1, afterKey: after });
    const kept = rows.slice(0, limit);
    const next = rows.length > limit ? encodeCursor([kept[kept.length - 1].key]) : null;
    return { rows: await this.views(kept), next };
  }

  /** Marks the current overlap with this key deliberate for the sites it spans now (a repeat replaces the note and sites). */
  async ack(body: OverlapAckBody): Promise<OverlapView> {
    const note = body.note === undefined || body.note === null || body.note.trim() === "" ? null : body.note;
    if (note !== null && [...note].length > NOTE_MAX_LENGTH) {
      throw badRequest("text_too_long", `note is longer than ${NOTE_MAX_LENGTH} characters.`);
    }
    const key = body.key.trim().toLowerCase();
    const current = KEY_PATTERN.test(key) ? (await this.repo.list({ limit: 1, onlyKey: key }))[0] : undefined;
    if (!current) throw notFound("No current subnet overlap has this key (it may have been resolved since the list was read).", "overlap_not_found");
    await this.repo.upsertAck(key, current.sites, note, requireCaller().username);
    const [after] = await this.repo.list({ limit: 1, onlyKey: key });
    if (!after) throw notFound("No current subnet overlap has this key.", "overlap_not_found");
    return (await this.views([after]))[0];
  }

  private async views(rows: OverlapRow[]): Promise<OverlapView[]> {
    const ipam: { server_id: string; site_id: string }[] = [];
    const folders: string[] = [];
    for (const r of rows)
      for (const key of r.sites) {
        const site = parseSiteKey(key);
        if (site.kind === "ipam") ipam.push({ server_id: site.server_id!, site_id: site.site_id! });
        else folders.push(site.folder_id!);
      }
    const names = rows.length ? await this.repo.names(ipam, folders) : { ipam: new Map<string, string>(), folders: new Map<string, string>() };
    return rows.map((r) => ({
      key: r.key,
      prefixes: [r.lo, r.hi],
      sites: r.sites.map((key) => {
        const site = parseSiteKey(key);
        const name = site.kind === "ipam" ? names.ipam.get(`${site.server_id}:${site.site_id}`) : names.folders.get(site.folder_id!);
        return { ...site, name: name ?? null };
      }),
      ack: {
        acked: r.acked,
        note: r.ack_sites ? r.note : null,
        acked_at: r.acked_at,
        by: r.acked_by,
        sites: r.ack_sites ?? [],
      },
    }));
  }
}

/** 'ipam:<server uuid>:<site id>' or 'folder:<folder uuid>'. */
export function parseSiteKey(key: string): Omit<OverlapSite, "name"> {
  if (key.startsWith("folder:")) return { key, kind: "folder", server_id: null, site_id: null, folder_id: key.slice(7) };
  const rest = key.slice(5);
  return { key, kind: "ipam", server_id: rest.slice(0, 36), site_id: rest.slice(37), folder_id: null };
}
