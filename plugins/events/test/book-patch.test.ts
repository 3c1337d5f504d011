/**
 * The ingest parsers attribute what they parse with their own copy of the node address book. A change to the book
 * reaches them as a patch naming the addresses whose node changed (not a whole new copy), and a re-read that changed
 * nothing sends them nothing; attribution follows a node made, moved and deleted.
 */
import { jest } from "@jest/globals";
import { NodeAddresses } from "../../inventory/contract.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";
import { ListenerService } from "../services/ListenerService.js";
import type { IngestState } from "../ingest/protocol.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { until } from "../../../test/support/wait.js";

let k: TestKernel;
let port = 0;
beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    overrides: {
      pluginConfig: {
        events: { syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50, ingest: { workers: 2 } },
      },
    },
  });
  const listeners = ((await k.request("GET", "/listeners")).body as { listeners: { name: string; port: number }[] }).listeners;
  port = listeners.find((l) => l.name === "syslog.udp")!.port;
});
afterAll(() => k?.stop());

/** The node the stored event with this text was attributed to (null: none). */
async function attributedTo(text: string): Promise<string | null> {
  const rows = await until(`the event "${text}" stored`, async () => {
    await k.context("events").get(EventPipeline).flush();
    const found = (await k.request("GET", `/events?q=${encodeURIComponent(text)}`)).body as { node_id: string | null }[];
    return found.length ? found : null;
  });
  return rows[0].node_id;
}

it("sends the parsers the changed addresses only, and attribution follows the node", async () => {
  const book = k.context("inventory").get(NodeAddresses);
  const ingest = k.context("events").get(ListenerService).ingest!;
  const sent: IngestState[] = [];
  const original = ingest.setState.bind(ingest);
  const spy = jest.spyOn(ingest, "setState").mockImplementation((state: IngestState) => {
    sent.push(state);
    original(state);
  });
  try {
    await book.reload();
    expect(sent).toEqual([]);
    const node = ((await k.request("POST", "/nodes", { body: { name: "patched", address: "127.0.0.3" } })).body as { id: string }).id;
    await until("the node in the book", async () => book.byIp("127.0.0.3")?.id === node);
    expect(sent).toEqual([{ bookPatch: [["127.0.0.3", { id: node, folder_path: [] }]] }]);
    await sendUdp(port, "<13>from the new node", "127.0.0.3");
    expect(await attributedTo("from the new node")).toBe(node);

    expect((await k.request("PUT", `/nodes/${node}`, { body: { name: "patched", address: "127.0.0.4" } })).status).toBe(200);
    await until("the node moved in the book", async () => book.byIp("127.0.0.4")?.id === node);
    expect(sent[1].bookPatch?.sort()).toEqual([
      ["127.0.0.3", null],
      ["127.0.0.4", { id: node, folder_path: [] }],
    ]);
    await sendUdp(port, "<13>from the old address", "127.0.0.3");
    await sendUdp(port, "<13>from the new address", "127.0.0.4");
    expect(await attributedTo("from the old address")).toBeNull();
    expect(await attributedTo("from the new address")).toBe(node);

    // A full re-read that finds nothing changed sends nothing.
    await book.reload();
    expect(sent).toHaveLength(2);

    // A parser that dies comes back with the book as patched, not as it was at start.
    const restarts = ingest.restarts().parser;
    const parsers = [0, 1].map((i) => ingest.threads(i).parser);
    await Promise.all(parsers.map((p) => p.terminate()));
    await until("the parsers restarted", async () => ingest.restarts().parser === restarts + 2);
    await sendUdp(port, "<13>after the parsers restarted", "127.0.0.4");
    await sendUdp(port, "<13>old address after the restart", "127.0.0.3");
    expect(await attributedTo("after the parsers restarted")).toBe(node);
    expect(await attributedTo("old address after the restart")).toBeNull();

    expect((await k.request("DELETE", `/nodes/${node}`)).status).toBe(204);
    await until("the node gone from the book", async () => book.byIp("127.0.0.4") === null);
    expect(sent[2]).toEqual({ bookPatch: [["127.0.0.4", null]] });
    await sendUdp(port, "<13>after the delete", "127.0.0.4");
    expect(await attributedTo("after the delete")).toBeNull();
  } finally {
    spy.mockRestore();
  }
});
