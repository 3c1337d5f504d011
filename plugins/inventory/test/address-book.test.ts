/** NodeAddressBook: address → node for the plugins that attribute what devices send (events, flows). */
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
