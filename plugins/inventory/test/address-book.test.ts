/** NodeAddressBook: address → node for the plugins that attribute what devices send (events, flows). */
import { jest } from "@jest/globals";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { canonicalIp } from "../../../core/index.js";
import { NodeAddressBook } from "../services/NodeAddressBook.js";
import { inventoryPlugin } from "../index.js";

let k: TestKernel;
beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin] });
});
afterAll(() => k?.stop());

it("canonicalIp: dotted quads, RFC 5952, v4-mapped IPv6 as IPv4; anything else unchanged", () => {
  expect(canonicalIp("192.0.2.1")).toBe("192.0.2.1");
  expect(canonicalIp("2001:DB8:0:0::1")).toBe("2001:db8::1");
  expect(canonicalIp("::ffff:192.0.2.7")).toBe("192.0.2.7");
  expect(canonicalIp("not an address")).toBe("not an address");
});

it("follows node creation, address changes and deletion; the folder path comes along", async () => {
  const book = k.context("inventory").get(NodeAddressBook);
  const folder = (await k.request("POST", "/node-groups", { body: { name: "site" } })).body as { id: string };
  const node = (await k.request("POST", "/nodes", { body: { name: "r1", address: "2001:db8::10", group_id: folder.id } })).body as { id: string };
  const r1 = await until("the new node", async () => book.byIp("2001:db8::10"));
  expect(r1).toEqual({ id: node.id, name: "r1", folder_path: [folder.id], pool: "default" });
  expect(book.node(node.id.toUpperCase())).toEqual(r1);
  expect((await k.request("PUT", `/nodes/${node.id}`, { body: { name: "r1", address: "192.0.2.10" } })).status).toBe(200);
  await until("the new address", async () => book.byIp("192.0.2.10"));
  expect(book.byIp("2001:db8::10")).toBeNull();
  expect((await k.request("DELETE", `/nodes/${node.id}`)).status).toBe(204);
  await until("the node gone", async () => book.node(node.id) === null);
});

it("two nodes at one address: the one in the receiving pool first, else the first by name", async () => {
  const book = k.context("inventory").get(NodeAddressBook);
  const edge = (await k.request("POST", "/node-groups", { body: { name: "edge site", pool: "edge" } })).body as { id: string };
  const ids: Record<string, string> = {};
  for (const [name, body] of [
    ["a-shared", { pool: "far" }],
    ["b-shared", { group_id: edge.id }],
    ["c-shared", {}],
  ] as const) {
    const res = await k.request("POST", "/nodes", { body: { name, address: "192.0.2.77", ...body } });
    expect(res.status).toBe(201);
    ids[name] = (res.body as { id: string }).id;
  }
  await book.reload();
  expect(book.byIp("192.0.2.77")?.id).toBe(ids["a-shared"]);
  expect(book.byIp("192.0.2.77", "far")).toMatchObject({ id: ids["a-shared"], pool: "far" });
  // The folder's pool is the node's effective pool.
  expect(book.byIp("192.0.2.77", "edge")).toMatchObject({ id: ids["b-shared"], pool: "edge" });
  expect(book.byIp("192.0.2.77", "default")).toMatchObject({ id: ids["c-shared"], pool: "default" });
  expect(book.byIp("192.0.2.77", "nowhere")?.id).toBe(ids["a-shared"]);
  expect(book.byIp("192.0.2.78", "edge")).toBeNull();
});

it("a node's change re-reads that node only, and the maps equal a full re-read after every kind of change", async () => {
  const book = k.context("inventory").get(NodeAddressBook);
  await book.reload();
  const store = (book as unknown as { ctx: { store: { query: (...a: unknown[]) => unknown } } }).ctx.store;
  const reads: string[] = [];
  const original = store.query.bind(store);
  const spy = jest.spyOn(store, "query").mockImplementation((...a: unknown[]) => {
    if (typeof a[0] === "string" && a[0].includes("inventory.node_directory")) reads.push(a[0]);
    return original(...a);
  });
  const pools = ["default", "far", "edge", "west", "nowhere"];
  const snapshot = () => JSON.stringify(pools.map((p) => book.entries(p).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
  /** After a change has reached the book: the maps as patched, then as a full re-read makes them. */
  const same = async () => {
    const patched = snapshot();
    await book.reload();
    expect(snapshot()).toBe(patched);
  };
  try {
    const west = (await k.request("POST", "/node-groups", { body: { name: "west site", pool: "west" } })).body as { id: string };
    const made = (await k.request("POST", "/nodes", { body: { name: "p-one", address: "198.51.100.1" } })).body as { id: string };
    await until("the new node", async () => book.byIp("198.51.100.1")?.id === made.id);
    expect(reads.some((q) => q.includes("ORDER BY"))).toBe(false);
    expect(reads.some((q) => q.includes("ANY($1::uuid[])"))).toBe(true);
    await same();
    // Into a folder with its own pool: the pool maps follow.
    expect((await k.request("PUT", `/nodes/${made.id}`, { body: { name: "p-one", address: "198.51.100.1", group_id: west.id } })).status).toBe(200);
    await until("the new pool", async () => book.byIp("198.51.100.1", "west")?.pool === "west");
    expect(book.byIp("198.51.100.1", "default")?.pool).toBe("west");
    await same();
    // A second node at that address (shared: a full re-read decides by name), then the first one leaves it.
    const twin = (await k.request("POST", "/nodes", { body: { name: "p-0-twin", address: "198.51.100.1" } })).body as { id: string };
    await until("the twin first by name", async () => book.byIp("198.51.100.1")?.id === twin.id);
    expect(book.byIp("198.51.100.1", "west")?.id).toBe(made.id);
    await same();
    expect((await k.request("PUT", `/nodes/${made.id}`, { body: { name: "p-one", address: "198.51.100.2", group_id: west.id } })).status).toBe(200);
    await until("the moved node", async () => book.byIp("198.51.100.2")?.id === made.id);
    expect(book.byIp("198.51.100.1", "west")?.id).toBe(twin.id);
    await same();
    // A v4-mapped address is the IPv4 key; a rename; a delete.
    expect((await k.request("PUT", `/nodes/${twin.id}`, { body: { name: "p-twin", address: "::ffff:198.51.100.3" } })).status).toBe(200);
    await until("the mapped address", async () => book.byIp("198.51.100.3")?.name === "p-twin");
    expect(book.byIp("198.51.100.1")).toBeNull();
    await same();
    expect((await k.request("DELETE", `/nodes/${made.id}`)).status).toBe(204);
    await until("the deleted node", async () => book.node(made.id) === null && book.byIp("198.51.100.2") === null);
    await same();
  } finally {
    spy.mockRestore();
  }
});

it("onReload names the addresses whose node changed: a patch the ones it touched, a full re-read what differs", async () => {
  const book = k.context("inventory").get(NodeAddressBook);
  await book.reload();
  const told: string[][] = [];
  const off = book.onReload((changed) => told.push([...changed].sort()));
  try {
    await book.reload();
    expect(told).toEqual([[]]);
    const made = (await k.request("POST", "/nodes", { body: { name: "told-one", address: "203.0.113.1" } })).body as { id: string };
    await until("the patch", async () => told.length === 2);
    expect(told[1]).toEqual(["203.0.113.1"]);
    // Changed behind the bus's back (another replica): the periodic full re-read finds the old and the new address.
    await k.context("inventory").store.query("UPDATE inventory.nodes SET address = '203.0.113.2' WHERE id = $1", [made.id]);
    await book.reload();
    expect(told[2]).toEqual(["203.0.113.1", "203.0.113.2"]);
    // A folder moved: the path of the node in it changed, its address did not.
    const top = (await k.request("POST", "/node-groups", { body: { name: "told top" } })).body as { id: string };
    const sub = (await k.request("POST", "/node-groups", { body: { name: "told sub" } })).body as { id: string };
    expect((await k.request("PUT", `/nodes/${made.id}`, { body: { name: "told-one", address: "203.0.113.2", group_id: sub.id } })).status).toBe(200);
    await until("the node in its folder", async () => book.byIp("203.0.113.2")?.folder_path.length === 1);
    const before = told.length;
    await k.context("inventory").store.query("UPDATE inventory.node_groups SET parent_id = $1 WHERE id = $2", [top.id, sub.id]);
    await book.reload();
    expect(told.length).toBe(before + 1);
    expect(told[before]).toEqual(["203.0.113.2"]);
    expect(book.byIp("203.0.113.2")?.folder_path).toEqual([top.id, sub.id]);
  } finally {
    off();
  }
});
