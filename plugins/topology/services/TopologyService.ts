import { Inject, Injectable } from "@tsed/di";
import {
  assertNodeInScope,
  badRequest,
  canonicalIp,
  decodeCursor,
  isIpAddress,
  isRfc3339,
  isUuid,
  notFound,
  page,
  type Scope,
  scopeCovers,
  scopeFolders,
} from "../../../core/index.js";
import { DiscoveryImport, NodeAddresses } from "../../inventory/contract.js";
import type { ImportedNeighbor, LinkView, NeighborImportBody, NeighborView, UnknownNeighborView } from "../models/TopologyModels.js";
import { type LinkRow, TopologyRepository, type UnknownRow } from "../repositories/TopologyRepository.js";
import { DiscoveryService } from "./DiscoveryService.js";

type Page<T> = { rows: T[]; next: string | null };

const cursorOf = (token: string | undefined): [string, string] | null =>
  token ? (decodeCursor(token, 2, ([at, id]) => isRfc3339(at) && isUuid(id)) as [string, string]) : null;

function linkView(r: LinkRow): LinkView {
  return {
    id: r.id,
    a: { node_id: r.a_node, node_name: r.a_name, ifindex: r.a_ifindex, port: r.a_port },
    b: { node_id: r.b_node, node_name: r.b_name, ifindex: r.b_ifindex, port: r.b_port },
    protocols: r.protocols,
    resolved_by: r.resolved_by,
    state: r.state,
    first_seen: r.first_seen,
    last_seen: r.last_seen,
    gone_at: r.gone_at,
  };
}

function neighborView(nodeId: string, r: LinkRow): NeighborView {
  const here = r.a_node === nodeId;
  return {
    link_id: r.id,
    local_ifindex: here ? r.a_ifindex : r.b_ifindex,
    local_port: here ? r.a_port : r.b_port,
    node_id: here ? r.b_node : r.a_node,
    node_name: here ? r.b_name : r.a_name,
    remote_ifindex: here ? r.b_ifindex : r.a_ifindex,
    remote_port: here ? r.b_port : r.a_port,
    protocols: r.protocols,
    state: r.state,
    first_seen: r.first_seen,
    last_seen: r.last_seen,
  };
}

function unknownView(r: UnknownRow): UnknownNeighborView {
  return {
    id: r.id,
    seen_by: { node_id: r.node_id, node_name: r.node_name },
    protocol: r.protocol,
    local_ifindex: r.local_ifindex,
    local_port: r.local_port,
    chassis_id: r.chassis_id,
    sys_name: r.sys_name,
    port: r.port,
    mgmt_addresses: r.mgmt_addresses,
    platform: r.platform,
    state: r.state,
    first_seen: r.first_seen,
    last_seen: r.last_seen,
  };
}

/** The API's reads of links and neighbours, and the import of an unknown neighbour as a node. */
@Injectable()
export class TopologyService {
  @Inject(TopologyRepository)
  private repo: TopologyRepository;

  @Inject(DiscoveryImport)
  private importer: DiscoveryImport;

  @Inject(NodeAddresses)
  private addresses: NodeAddresses;

  @Inject(DiscoveryService)
  private discovery: DiscoveryService;

  async links(scope: Scope, state: string | undefined, limit: number, cursor: string | undefined): Promise<Page<LinkView>> {
    const rows = await this.repo.links(scopeFolders(scope), state ?? null, limit + 1, cursorOf(cursor));
    const p = page(rows, limit, (r) => [r.first_seen, r.id]);
    return { rows: p.rows.map(linkView), next: p.next };
  }

  async neighbors(nodeId: string, scope: Scope, state: string | undefined, limit: number, cursor: string | undefined): Promise<Page<NeighborView>> {
    const after = cursorOf(cursor);
    const [node] = await this.repo.directory([nodeId]);
    assertNodeInScope(scope, node?.folder_path);
    const rows = await this.repo.linksOf(nodeId, scopeFolders(scope), state ?? null, limit + 1, after);
    const p = page(rows, limit, (r) => [r.first_seen, r.id]);
    return { rows: p.rows.map((r) => neighborView(nodeId, r)), next: p.next };
  }

  async unknown(scope: Scope, state: string | undefined, limit: number, cursor: string | undefined): Promise<Page<UnknownNeighborView>> {
    const rows = await this.repo.unknown(scopeFolders(scope), state ?? null, limit + 1, cursorOf(cursor));
    const p = page(rows, limit, (r) => [r.first_seen, r.id]);
    return { rows: p.rows.map(unknownView), next: p.next };
  }

  /**
   * Imports an unknown neighbour as a node through inventory's discovery import (as the caller: its scope and
   * permissions apply): at its first management address, named by its sysName, in the folder of the node that saw it
   * and with that node's credential unless the body says otherwise. Then the neighbours that resolve to it become links.
   */
  async importUnknown(id: string, body: NeighborImportBody, scope: Scope): Promise<ImportedNeighbor> {
    const u = await this.repo.unknownById(id);
    if (!u || !scopeCovers(scope, u.folder_path)) throw notFound("No such unknown neighbour.");
    const address = body.address ?? u.mgmt_addresses.find((a) => isIpAddress(a));
    if (!address || !isIpAddress(address)) throw badRequest("no_address", "The neighbour announced no management address: send one as address.");
    const name = (body.name ?? u.sys_name ?? u.chassis_id ?? address).trim().slice(0, 255) || address;
    const result = await this.importer.import(
      {
        nodes: [{ name, address, credential_id: body.credential_id === undefined ? u.credential_id : body.credential_id }],
        group_id: body.group_id === undefined ? u.group_id : body.group_id,
      },
      scope,
    );
    await this.addresses.reload();
    const nodeId = this.addresses.byIp(canonicalIp(address))?.id ?? null;
    const links = await this.discovery.promote();
    return { node_id: nodeId, created: result.created > 0, links };
  }
}
