import { io, type Socket } from "socket.io-client";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin, NODE_DIRECTORY_VIEW, type NodeDirectoryRow } from "../index.js";
import { startInventoryKernel } from "./support.js";

let k: TestKernel;
const ids: Record<string, string> = {};

beforeAll(async () => {
  k = await startInventoryKernel();
  const db = k.databaseUrl!;
  const folder = async (name: string, parent: string | null, extra = "") =>
    (
      await rawQuery<{ id: string }>(
        db,
        `INSERT INTO inventory.node_groups (name, parent_id${extra ? ", pool, tags, tags_excluded" : ""}) VALUES ($1, $2${extra}) RETURNING id`,
        [name, parent],
      )
    )[0].id;
  ids.site = await folder("site", null, ", 'site-pool', '{core,emea}', '{}'");
  ids.rack = await folder("rack", ids.site, ", NULL, '{rack}', '{emea}'");
  ids.node = (
    await rawQuery<{ id: string }>(
      db,
      `INSERT INTO inventory.nodes (name, address, group_id, tags, tags_excluded) VALUES ('sw1', '2001:db8::1', $1, '{edge}', '{core}') RETURNING id`,
      [ids.rack],
    )
  )[0].id;
  ids.rootNode = (
    await rawQuery<{ id: string }>(db, `INSERT INTO inventory.nodes (name, address, pool) VALUES ('lonely', '10.0.0.9', 'p2') RETURNING id`)
  )[0].id;
  await rawQuery(db, `INSERT INTO inventory.credentials (name, kind, settings, secret_sealed) VALUES ('c', 'snmp_v2c', '{}', 'sealed:v1:xyz')`);
});
afterAll(async () => {
  await k?.stop();
});

describe("published directory view", () => {
  it("gives each node its folder path, effective pool and effective tags", async () => {
    const rows = await rawQuery<NodeDirectoryRow>(k.databaseUrl!, `SELECT * FROM ${NODE_DIRECTORY_VIEW} ORDER BY name`);
    expect(rows).toEqual([
      expect.objectContaining({ id: ids.rootNode, name: "lonely", folder_path: [], folder_names: [], effective_pool: "p2", effective_tags: [] }),
      expect.objectContaining({
        id: ids.node,
        name: "sw1",
        address: "2001:db8::1",
        folder_path: [ids.site, ids.rack],
        folder_names: ["site", "rack"],
        effective_pool: "site-pool",
        // site gives core+emea; rack adds rack and drops emea; the node adds edge and drops core.
        effective_tags: ["edge", "rack"],
      }),
    ]);
  });
});

describe("configuration bundle contribution", () => {
  it("exports the six tables, carrying no secrets", async () => {
    const ctx = k.kernel.context("inventory")!;
    const tables = inventoryPlugin.bundle!.tables.map((t) => ({
      name: t.name,
      // Big tables stream (an async iterable): collected here.
      export: async (c: typeof ctx) => {
        const rows: unknown[] = [];
        for await (const r of await t.export(c)) rows.push(r);
        return rows;
      },
    }));
    expect(tables.map((t) => t.name).sort()).toEqual(["classification_rules", "dns_checks", "node_groups", "nodes", "profiles", "url_checks"]);
    const nodes = (await tables.find((t) => t.name === "nodes")!.export(ctx)) as { id: string; address: string }[];
    expect(nodes.map((n) => n.address).sort()).toEqual(["10.0.0.9", "2001:db8::1"]);
    const groups = await tables.find((t) => t.name === "node_groups")!.export(ctx);
    expect(groups).toHaveLength(2);
    const everything = JSON.stringify(await Promise.all(tables.map((t) => t.export(ctx))));
    expect(everything).not.toContain("sealed:v1:");
  });
});

describe("inventory.changes channel", () => {
  let sockets: Socket[] = [];
  afterEach(() => {
    for (const s of sockets) s.close();
    sockets = [];
  });

  async function subscriber(token: string): Promise<{ events: unknown[] }> {
    const socket = io(k.url, { auth: { token }, transports: ["websocket"], reconnection: false, forceNew: true });
    sockets.push(socket);
    const events: unknown[] = [];
    socket.on("inventory.node.updated", (e) => events.push(e));
    const ack = await new Promise<{ ok: boolean }>((resolve) => socket.emit("subscribe", { channel: "inventory.changes" }, resolve));
    expect(ack.ok).toBe(true);
    return { events };
  }

  it("carries bus events to sockets whose scope covers the node's folder", async () => {
    const all = await subscriber(await k.token("viewer"));
    const inSite = await subscriber(await k.token("viewer", { folders: [ids.site] }));
    const elsewhere = await subscriber(await k.token("viewer", { folders: ["00000000-0000-4000-8000-000000000001"] }));
    const ctx = k.kernel.context("inventory")!;
    await ctx.bus.emit("inventory.node.updated", { id: ids.node, name: "sw1", address: "2001:db8::1", group_id: ids.rack, folder_path: [ids.site, ids.rack] });
    const deadline = Date.now() + 5000;
    while ((all.events.length === 0 || inSite.events.length === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(all.events).toHaveLength(1);
    expect(inSite.events).toEqual([expect.objectContaining({ id: ids.node })]);
    await new Promise((r) => setTimeout(r, 300));
    expect(elsewhere.events).toHaveLength(0);
  });
});
