/**
 * End to end against the local platform: an organization is added, its sync imports the online devices of watched
 * networks into the folders their addresses fall in, a deleted node is not imported again, device statuses reach the
 * alerts plugin, and a refused key raises the organization's alert until a sync works again.
 */
import { startNetcloudServer, type CloudDeviceDef, type NetcloudServer } from "../../../test/support/netcloudServer.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { alertsPlugin, EventAlertService } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { netcloudPlugin } from "../index.js";
import { DEVICE_CHECK_ID, ORG_CHECK_ID } from "../services/OrgAlerts.js";
import { SyncService } from "../services/SyncService.js";

const KEY = "nc-sync-key-3e8a0c5d9b7f1a2e";
const KEY2 = "nc-sync-key-second-71c0de9a";
const PAGE = 50;

let k: TestKernel;
let cloud: NetcloudServer;
let orgRow: string;
let siteA: string;
let siteB: string;

const dev = (serial: string, networkId: string, lanIp: string | null, status: CloudDeviceDef["status"]): CloudDeviceDef => ({
  serial,
  name: `sw-${serial}`,
  networkId,
  model: "MS225-48",
  lanIp,
  status,
});

/** 120 online devices in N0 (60 in site A's range, 60 in site B's), plus the ones each rule is about. */
const DEVICES: CloudDeviceDef[] = [
  ...Array.from({ length: 60 }, (_, i) => dev(`A${String(i).padStart(3, "0")}`, "N0", `10.20.0.${i + 1}`, "online")),
  ...Array.from({ length: 60 }, (_, i) => dev(`B${String(i).padStart(3, "0")}`, "N2", `10.20.1.${i + 1}`, "online")),
  dev("X-NOFOLDER", "N0", "10.99.0.5", "online"),
  dev("X-UNWATCHED", "N1", "10.20.0.200", "online"),
  dev("X-NEVER-ONLINE", "N0", "10.20.0.201", "offline"),
  dev("X-NO-IP", "N0", null, "online"),
  dev("X-ALERTING", "N0", "10.20.0.202", "alerting"),
];

const sync = (id = orgRow) => k.context("netcloud").get(SyncService).sync(id);
const flushAlerts = () => k.context("alerts").get(EventAlertService).flush();
const q = async <T extends Record<string, unknown> = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
  (await k.context("netcloud").store.query<T>(sql, params)).rows as T[];
const nodes = () =>
  q<{ id: string; name: string; address: string; group_id: string | null; model: string | null }>(
    `SELECT id, name, host(address) AS address, group_id, model FROM inventory.node_directory ORDER BY name`,
  );
const api = (method: "get" | "post" | "put" | "delete", path: string, body?: unknown) => {
  const req = k.http[method](`/api/v1${path}`).set({ Authorization: `Bearer ${k.adminToken}` });
  return body === undefined ? req : req.send(body as object);
};

/** Waits for the sync the add queued, and answers the organization's view after it. */
async function firstSync(id: string): Promise<Record<string, unknown>> {
  let view: Record<string, unknown> = {};
  for (let i = 0; i < 100 && view.last_sync_status !== "ok"; i++) {
    await new Promise((r) => setTimeout(r, 100));
    view = (await api("get", `/netcloud/orgs/${id}`)).body;
  }
  return view;
}

beforeAll(async () => {
  cloud = await startNetcloudServer();
  cloud.addOrg(
    {
      id: "o-201",
      name: "Delta Ops",
      networks: [
        { id: "N0", name: "HQ" },
        { id: "N1", name: "Lab" },
        { id: "N2", name: "Branch" },
      ],
      devices: DEVICES.map((d) => ({ ...d })),
    },
    KEY,
  );
  cloud.addOrg(
    {
      id: "o-202",
      name: "Echo Small",
      networks: [{ id: "E0", name: "Only" }],
      devices: Array.from({ length: 10 }, (_, i) => dev(`E${i}`, "E0", `10.30.0.${i + 1}`, "online")),
    },
    KEY2,
  );
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, netcloudPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        netcloud: { allowedHosts: ["127.0.0.1"], defaultBaseUrl: cloud.url, caCertPem: cloud.cert.cert, pageSize: PAGE, requestTimeoutMs: 3000 },
      },
    },
  });
  const folder = async (name: string, ip_ranges: string[]) => {
    const res = await api("post", "/node-groups", { name, ip_ranges });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  siteA = await folder("Site A", ["10.20.0.0/24"]);
  siteB = await folder("Site B", ["10.20.1.0/24"]);
});
afterAll(async () => {
  await k?.stop();
  await cloud?.stop();
});

it("adds an organization and its first sync (queued at once) reads networks and devices over every page, importing nothing yet", async () => {
  const res = await api("post", "/netcloud/orgs", { org_id: "o-201", api_key: KEY });
  expect(res.status).toBe(201);
  orgRow = res.body.id;
  const view = await firstSync(orgRow);
  expect(view).toMatchObject({ last_sync_status: "ok", networks: 3, devices: DEVICES.length, devices_as_nodes: 0, import_devices: false });
  expect(await nodes()).toEqual([]);
  // 125 devices at 50 a page: three pages of devices and of statuses, each next page asked with startingAfter.
  const devicePages = cloud.requests.filter((r) => r.path.startsWith("/api/v1/organizations/o-201/devices?"));
  expect(devicePages.map((r) => new URL(r.path, cloud.origin).searchParams.get("startingAfter"))).toEqual([null, "A049", "B039"]);
  expect(cloud.requests.filter((r) => r.path.startsWith("/api/v1/organizations/o-201/devices/statuses?"))).toHaveLength(3);
  expect(cloud.requests.every((r) => r.authorized)).toBe(true);
});

it("imports the online devices of watched networks, filed by prefix; not those never online, unwatched, or without an address", async () => {
  expect((await api("put", `/netcloud/orgs/${orgRow}/networks/N1`, { watched: false })).status).toBe(200);
  expect((await api("put", `/netcloud/orgs/${orgRow}/import-settings`, { import_devices: true, file_by_prefix: true })).status).toBe(200);
  const result = await sync();
  expect(result).toMatchObject({ status: "ok", imported: 122, linked_existing: 0 });

  const all = await nodes();
  expect(all).toHaveLength(122);
  const byName = new Map(all.map((n) => [n.name, n]));
  expect(all.filter((n) => n.group_id === siteA).map((n) => n.name)).toHaveLength(61); // A000..A059 and the alerting one
  expect(all.filter((n) => n.group_id === siteB)).toHaveLength(60);
  expect(byName.get("sw-A000")).toMatchObject({ address: "10.20.0.1", group_id: siteA, model: "MS225-48" });
  expect(byName.get("sw-X-NOFOLDER")).toMatchObject({ address: "10.99.0.5", group_id: null });
  expect(byName.get("sw-X-ALERTING")).toMatchObject({ group_id: siteA });
  for (const absent of ["sw-X-UNWATCHED", "sw-X-NEVER-ONLINE", "sw-X-NO-IP"]) expect(byName.has(absent)).toBe(false);

  // A device that is alerting when it becomes a node has its incident at once.
  await flushAlerts();
  const active = await q<{ node_id: string; severity: string; check_id: string }>(
    `SELECT node_id, severity, check_id FROM alerts.active_alerts WHERE subject_kind = 'node'`,
  );
  expect(active).toEqual([{ node_id: byName.get("sw-X-ALERTING")!.id, severity: "warning", check_id: DEVICE_CHECK_ID }]);
});

it("keeps a known network's flag and watches a new one", async () => {
  const org = cloud.orgs.get("o-201")!;
  org.networks.push({ id: "N3", name: "Annex" });
  org.devices.push(dev("N3-1", "N3", "10.20.1.250", "online"));
  expect((await sync()).imported).toBe(1);
  const nets = (await api("get", `/netcloud/orgs/${orgRow}/networks`)).body as { network_id: string; watched: boolean }[];
  expect(Object.fromEntries(nets.map((n) => [n.network_id, n.watched]))).toEqual({ N0: true, N1: false, N2: true, N3: true });
});

it("imports a device once it has reported online; its status changes reach the alerts plugin (offline fires, online clears)", async () => {
  cloud.device("o-201", "X-NEVER-ONLINE").status = "online";
  await sync();
  // Now it is a node; going offline raises its incident.
  cloud.device("o-201", "X-NEVER-ONLINE").status = "offline";
  const r = await sync();
  expect(r.status_changes).toBe(1);
  await flushAlerts();
  const node = (await nodes()).find((n) => n.name === "sw-X-NEVER-ONLINE")!;
  expect(node).toBeDefined();
  const rows = await q<{ severity: string; title: string }>(`SELECT severity, title FROM alerts.active_alerts WHERE node_id = $1`, [node.id]);
  expect(rows).toEqual([{ severity: "critical", title: "sw-X-NEVER-ONLINE offline on the netcloud platform" }]);

  // Back online: the incident clears.
  cloud.device("o-201", "X-NEVER-ONLINE").status = "online";
  await sync();
  await flushAlerts();
  expect(await q(`SELECT 1 FROM alerts.active_alerts WHERE node_id = $1`, [node.id])).toEqual([]);
});

it("never imports again a node an operator deleted (bus event), nor one deleted while the bus was not listening", async () => {
  const before = await nodes();
  const victim = before.find((n) => n.name === "sw-A007")!;
  expect((await api("delete", `/nodes/${victim.id}`)).status).toBe(204);
  // A deletion this replica's bus never heard of: the sync notices the node is gone.
  const quiet = before.find((n) => n.name === "sw-B011")!;
  await k.context("netcloud").store.query(`DELETE FROM inventory.nodes WHERE id = $1`, [quiet.id]);

  const r = await sync();
  expect(r.imported).toBe(0);
  const after = await nodes();
  expect(after).toHaveLength(before.length - 2);
  expect(after.some((n) => n.name === "sw-A007" || n.name === "sw-B011")).toBe(false);
  const memory = await q<{ serial: string; node_id: string | null; imported: boolean }>(
    `SELECT serial, node_id, imported_at IS NOT NULL AS imported FROM netcloud.devices WHERE serial IN ('A007', 'B011') ORDER BY serial`,
  );
  expect(memory).toEqual([
    { serial: "A007", node_id: null, imported: true },
    { serial: "B011", node_id: null, imported: true },
  ]);
});

it("links a device to a node that already stands at its address instead of importing it", async () => {
  const made = await api("post", "/nodes", { name: "hand-made", address: "10.20.1.251" });
  expect(made.status).toBe(201);
  cloud.orgs.get("o-201")!.devices.push(dev("PRE-1", "N2", "10.20.1.251", "online"));
  expect(await sync()).toMatchObject({ imported: 0, linked_existing: 1 });
  expect(await q(`SELECT node_id FROM netcloud.devices WHERE serial = 'PRE-1'`)).toEqual([{ node_id: made.body.id }]);
});

it("raises the organization's alert when its key is refused, and clears it when a sync works again", async () => {
  cloud.keys.delete(KEY);
  expect((await sync()).status).toBe("key_refused");
  await flushAlerts();
  const active = await q<Record<string, unknown>>(
    `SELECT subject_kind, subject_name, node_id, check_id, severity, state FROM alerts.active_alerts WHERE subject_kind = 'netcloud_org'`,
  );
  expect(active).toEqual([
    { subject_kind: "netcloud_org", subject_name: "Delta Ops", node_id: null, check_id: ORG_CHECK_ID, severity: "critical", state: "unreachable" },
  ]);
  expect((await api("get", `/netcloud/orgs/${orgRow}`)).body.last_sync_status).toBe("key_refused");
  // Operators acknowledge it by its readable subject, as the alerts plugin's ack route takes it.
  const ack = await api("post", "/alerts/ack", { subject: "netcloud_org:Delta Ops" });
  expect(ack.status).toBe(200);
  // Still refused: still one incident, not a second fire.
  await sync();
  await flushAlerts();
  expect(await q(`SELECT count(*)::int AS n FROM alerts.history WHERE subject_kind = 'netcloud_org'`)).toEqual([{ n: 1 }]);

  cloud.addOrg(cloud.orgs.get("o-201")!, KEY);
  expect((await sync()).status).toBe("ok");
  await flushAlerts();
  expect(await q(`SELECT 1 FROM alerts.active_alerts WHERE subject_kind = 'netcloud_org'`)).toEqual([]);
  expect(await q(`SELECT resolved FROM alerts.history WHERE subject_kind = 'netcloud_org' ORDER BY recorded_at, resolved`)).toEqual([
    { resolved: false },
    { resolved: true },
  ]);
});

it("raises the organization's alert when the platform cannot be reached (timeout)", async () => {
  cloud.delayMs = 3500;
  try {
    expect((await sync()).status).toBe("timeout");
  } finally {
    cloud.delayMs = 0;
  }
  await flushAlerts();
  expect(await q(`SELECT subject_name, title FROM alerts.active_alerts WHERE subject_kind = 'netcloud_org'`)).toEqual([
    { subject_name: "Delta Ops", title: "netcloud platform did not answer in time" },
  ]);
  expect((await sync()).status).toBe("ok");
  await flushAlerts();
  expect(await q(`SELECT 1 FROM alerts.active_alerts WHERE subject_kind = 'netcloud_org'`)).toEqual([]);
});

it("caps an organization's import at max_devices (the nodes it has brought in)", async () => {
  const res = await api("post", "/netcloud/orgs", { org_id: "o-202", api_key: KEY2 });
  expect(res.status).toBe(201);
  await firstSync(res.body.id);
  expect((await api("put", `/netcloud/orgs/${res.body.id}/import-settings`, { import_devices: true, file_by_prefix: false, max_devices: 4 })).status).toBe(200);
  await sync(res.body.id);
  await sync(res.body.id);
  expect((await nodes()).filter((n) => n.address.startsWith("10.30.0."))).toHaveLength(4);
  expect((await api("get", `/netcloud/orgs/${res.body.id}`)).body.devices_as_nodes).toBe(4);
});

it("syncs on request (POST /netcloud/orgs/{id}/sync: 202, then last_sync_at moves)", async () => {
  const before = (await api("get", `/netcloud/orgs/${orgRow}`)).body.last_sync_at as string;
  const res = await api("post", `/netcloud/orgs/${orgRow}/sync`);
  expect({ status: res.status, body: res.body }).toEqual({ status: 202, body: { ok: true } });
  let after = before;
  for (let i = 0; i < 100 && after === before; i++) {
    await new Promise((r) => setTimeout(r, 100));
    after = (await api("get", `/netcloud/orgs/${orgRow}`)).body.last_sync_at;
  }
  expect(after > before).toBe(true);
  expect((await api("post", `/netcloud/orgs/00000000-0000-4000-8000-000000000000/sync`)).status).toBe(404);
});

it("dispatches each due organization to its own sync job", async () => {
  await k.context("netcloud").store.query(`UPDATE netcloud.orgs SET next_sync_at = now() - interval '1 second', last_sync_at = NULL`);
  expect(await k.context("netcloud").get(SyncService).dispatch()).toBe(2);
  expect(await k.context("netcloud").get(SyncService).dispatch()).toBe(0);
  let synced = 0;
  for (let i = 0; i < 100 && synced < 2; i++) {
    await new Promise((r) => setTimeout(r, 100));
    synced = (await q<{ n: number }>(`SELECT count(*)::int AS n FROM netcloud.orgs WHERE last_sync_at IS NOT NULL`))[0].n;
  }
  expect(synced).toBe(2);
});

it("never logs a key", () => {
  const logs = k.logs.join("\n");
  expect(logs).toContain("netcloud: organization synced");
  expect(logs).not.toContain(KEY);
  expect(logs).not.toContain(KEY2);
});
