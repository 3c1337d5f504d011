/** NodeAddressBook: address → node for the plugins that attribute what devices send (events, flows). */
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { canonicalIp, NodeAddressBook } from "../contract.js";
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
  expect(r1).toEqual({ id: node.id, name: "r1", folder_path: [folder.id] });
  expect(book.node(node.id.toUpperCase())).toEqual(r1);
  expect((await k.request("PUT", `/nodes/${node.id}`, { body: { name: "r1", address: "192.0.2.10" } })).status).toBe(200);
  await until("the new address", async () => book.byIp("192.0.2.10"));
  expect(book.byIp("2001:db8::10")).toBeNull();
  expect((await k.request("DELETE", `/nodes/${node.id}`)).status).toBe(204);
  await until("the node gone", async () => book.node(node.id) === null);
});
