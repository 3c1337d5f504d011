// The plugin in a real kernel (nms-core/testing: embedded PostgreSQL, the built-in plugins, real HTTP), posting to a
// webhook receiver on loopback. A threshold fires from samples published as the polling plugin publishes them.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Sample } from "nms-core/contracts/polling";
import { definePlugin } from "nms-core";
import { startTestKernel, type TestKernel } from "nms-core/testing";
import { alertRelayPlugin, ChatRelay } from "../index.js";

// A plugin that depends on this one: it reaches the relay through the contract's token, never RelayService.
const neighbour = definePlugin({ id: "relay-neighbour", version: "0.1.0", kernel: "^0.1.0", dependsOn: { "alert-relay": "^0.1.0" } });

interface Received {
  path: string;
  body: { text: string };
}

let k: TestKernel;
let hook: Server;
const received: Received[] = [];
let answer = 200;
let hookUrl = "";

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 10000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function sample(node: string, value: number): Sample {
  const at_unix_ms = Date.now();
  return {
    node_id: node,
    metric: "cpu_load_pct",
    value,
    at_unix_ms,
    ifindex: null,
    if_name: null,
    row: null,
    row_name: null,
    pool: "default",
    poller_id: "embedded",
    backfill: false,
  };
}

before(async () => {
  hook = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString("utf8")));
    req.on("end", () => {
      received.push({ path: req.url ?? "", body: JSON.parse(text) as { text: string } });
      res.statusCode = answer;
      res.end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
  const { port } = hook.address() as AddressInfo;
  hookUrl = `http://127.0.0.1:${port}`;
  k = await startTestKernel({
    plugins: [alertRelayPlugin, neighbour],
    overrides: {
      pluginConfig: { "alert-relay": { webhookUrl: `http://127.0.0.1:${port}/hooks/secret-part`, minSeverity: "warning" }, alerts: { flushMs: 20 } },
    },
  });
});

after(async () => {
  await k?.stop();
  await new Promise((r) => hook?.close(r));
});

describe("alert-relay", () => {
  it("relays a fire and its resolve to the webhook, and logs both", async () => {
    const node = await k.request("POST", "/nodes", { body: { name: "core-sw1", address: "10.20.0.1" } });
    assert.equal(node.status, 201);
    const nodeId = (node.body as { id: string }).id;
    const threshold = await k.request("POST", "/thresholds", {
      body: { metric: "cpu_load_pct", scope_level: "global", direction: "above", warning: 80, critical: 90 },
    });
    assert.equal(threshold.status, 201);

    const bus = k.context("alert-relay").bus;
    await bus.emit("polling.sample", { samples: [sample(nodeId, 95)] });
    const fired = await until("the fire post", () => received.find((r) => r.body.text.startsWith("[CRITICAL]")));
    assert.equal(fired.path, "/hooks/secret-part");
    assert.match(fired.body.text, /^\[CRITICAL\] .*core-sw1/);

    await bus.emit("polling.sample", { samples: [sample(nodeId, 10)] });
    const resolved = await until("the resolve post", () => received.find((r) => r.body.text.startsWith("[RESOLVED]")));
    assert.match(resolved.body.text, /^\[RESOLVED\] .*core-sw1/);

    const log = await until("both deliveries logged", async () => {
      const res = await k.request("GET", "/alert-relay/deliveries");
      const rows = res.body as { kind: string; ok: boolean; http_status: number; severity: string }[];
      return rows.length === 2 ? rows : undefined;
    });
    assert.deepEqual(
      log.map((r) => [r.kind, r.ok, r.http_status, r.severity]),
      [
        ["resolved", true, 200, "critical"],
        ["fired", true, 200, "critical"],
      ],
    );
  });

  it("logs a failed post with its status and never the URL", async () => {
    answer = 503;
    try {
      const res = await k.request("POST", "/alert-relay/test", { body: { text: "hello" } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { ok: false, http_status: 503, error: "HTTP 503" });
    } finally {
      answer = 200;
    }
    assert.equal(received.at(-1)?.body.text, "hello");
    assert.ok(!k.logs.some((line) => line.includes("secret-part")), "the webhook URL must never be logged");
  });

  it("pages the delivery log with X-Next-Cursor", async () => {
    const first = await k.request("GET", "/alert-relay/deliveries?limit=2");
    assert.equal((first.body as unknown[]).length, 2);
    const cursor = first.headers.get("x-next-cursor");
    assert.ok(cursor);
    const second = await k.request("GET", `/alert-relay/deliveries?limit=2&cursor=${cursor}`);
    assert.deepEqual(
      (second.body as { kind: string }[]).map((r) => r.kind),
      ["fired"],
    );
    // Not a cursor at all, and a well-formed one whose parts would fail their SQL casts: both 400, never 500.
    const forged = Buffer.from(JSON.stringify(["yesterday", "x"])).toString("base64url");
    for (const cursor of ["nonsense", forged]) {
      const bad = await k.request("GET", `/alert-relay/deliveries?cursor=${cursor}`);
      assert.equal(bad.status, 400);
      assert.equal((bad.body as { error: { code: string } }).error.code, "invalid_cursor");
    }
  });

  it("adds a chat channel kind that the notifications plugin sends through, its URL kept secret", async () => {
    const kinds = await k.request("GET", "/notification-channels/kinds");
    assert.ok((kinds.body as { kind: string }[]).some((x) => x.kind === "chat"));
    const created = await k.request("POST", "/notification-channels", {
      body: { name: "team chat", kind: "chat", config: { url: `${hookUrl}/chat/secret-part` } },
    });
    assert.equal(created.status, 201);
    const id = (created.body as { id: string }).id;
    const view = await k.request("GET", `/notification-channels/${id}`);
    assert.deepEqual([(view.body as { config: unknown }).config, (view.body as { secrets_set: string[] }).secrets_set], [{}, ["url"]]);
    const sent = await k.request("POST", `/notification-channels/${id}/test`);
    assert.deepEqual(sent.body, { delivered: true, closed: null, error: null });
    const chat = received.filter((r) => r.path === "/chat/secret-part");
    assert.equal(chat.length, 1);
    assert.match(chat[0].body.text, /^\[TEST\] \[CRITICAL\] /);
  });

  it("keeps its routes to the roles and scopes they allow", async () => {
    assert.equal((await k.request("GET", "/alert-relay/deliveries", { token: null })).status, 401);
    assert.equal((await k.request("GET", "/alert-relay/deliveries", { token: await k.token("viewer") })).status, 200);
    const scoped = await k.token("viewer", { folders: ["00000000-0000-4000-8000-000000000001"] });
    assert.equal((await k.request("GET", "/alert-relay/deliveries", { token: scoped })).status, 403);
    assert.equal((await k.request("POST", "/alert-relay/test", { token: await k.token("viewer"), body: {} })).status, 403);
  });

  it("lets a plugin that depends on it post through its contract token", async () => {
    const relay = k.kernel.context("relay-neighbour")!.get(ChatRelay);
    assert.deepEqual(await relay.test("from next door"), { ok: true, http_status: 200, error: null });
    assert.equal(received.at(-1)?.body.text, "from next door");
    const [latest] = (await k.request("GET", "/alert-relay/deliveries?limit=1")).body as { kind: string }[];
    assert.equal(latest.kind, "test");
  });
});
