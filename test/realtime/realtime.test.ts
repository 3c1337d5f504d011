import { randomBytes, randomUUID } from "node:crypto";
import request from "supertest";
import type { Scope } from "../../core/auth/Caller.js";
import { fixtureWidgetsPlugin } from "../fixtures/plugins/widgets/index.js";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { closeAllSockets, connectRefused, connectSocket, type TestSocket } from "../support/socketClient.js";
import { FIXTURE_WIDGETS, spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";
import { BOOTSTRAP_TOKEN, startTestKernel, type TestKernel } from "../support/testKernel.js";

const LIVE = "fixture-widgets.live";
const ADMIN_FEED = "fixture-widgets.admin-feed";
const WIDGET = "fixture-widgets.widget";
const AUDIT = "fixture-widgets.audit";
/** How long a "no event" check waits, once a control socket has already received the same event. */
const QUIET_MS = 400;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
let seq = 0;
const uniqueMessage = (label: string) => `${label}-${++seq}-${randomBytes(4).toString("hex")}`;
const withMessage = (message: string) => (payload: unknown) => (payload as { message?: unknown })?.message === message;

/** POST /api/v1/widgets/publish as the bootstrap admin: `widget` on live (for the folder), `audit` on admin-feed. */
async function publish(baseUrl: string, message: string, folderId?: string): Promise<void> {
  const res = await request(baseUrl)
    .post("/api/v1/widgets/publish")
    .set("Authorization", `Bearer ${BOOTSTRAP_TOKEN}`)
    .send(folderId ? { message, folder_id: folderId } : { message });
  expect(res.status).toBeLessThan(300);
  expect(res.body).toEqual({ ok: true });
}

async function subscribed(socket: TestSocket, channel: string): Promise<TestSocket> {
  expect(await socket.subscribe(channel)).toEqual({ ok: true, channel });
  return socket;
}

afterEach(() => {
  closeAllSockets();
});

describe("realtime on one kernel", () => {
  let k: TestKernel;

  beforeAll(async () => {
    k = await startTestKernel({ plugins: [fixtureWidgetsPlugin] });
  });
  afterAll(async () => {
    closeAllSockets();
    await k?.stop();
  });

  describe("handshake", () => {
    it("refuses a connection without a token (public dashboard off)", async () => {
      const err = await connectRefused(k.url);
      expect(err.message).toEqual(expect.any(String));
      expect(err.message.length).toBeGreaterThan(0);
      expect(err.data).toEqual({ code: "unauthorized" });
    });

    it("refuses an unknown token", async () => {
      const err = await connectRefused(k.url, "not-a-real-token-" + randomBytes(8).toString("hex"));
      expect(err.data).toEqual({ code: "unauthorized" });
      expect(err.message).not.toMatch(/postgres|select|stack/i);
    });

    it("refuses an expired session", async () => {
      const username = `expired-${randomBytes(4).toString("hex")}`;
      const token = await k.session("admin", "All", username);
      // The session works before it expires...
      const ok = await connectSocket(k.url, token);
      ok.close();
      await rawQuery(
        k.databaseUrl!,
        "UPDATE core.sessions SET expires_at = now() - interval '1 minute' WHERE account_id = (SELECT id FROM core.accounts WHERE username = $1)",
        [username],
      );
      const err = await connectRefused(k.url, token);
      expect(err.data).toEqual({ code: "token_expired" });
    });

    it("refuses an expired API token", async () => {
      const created = await k.kernel.auth.createToken({
        name: `soon-${++seq}`,
        role: "admin",
        scope: "All",
        expires_at: new Date(Date.now() + 60_000).toISOString(),
      });
      await rawQuery(k.databaseUrl!, "UPDATE core.api_tokens SET expires_at = now() - interval '1 minute' WHERE id = $1", [created.id]);
      const err = await connectRefused(k.url, created.token);
      expect(err.data).toEqual({ code: "token_expired" });
    });

    it("accepts a session and lets it subscribe", async () => {
      const socket = await connectSocket(k.url, await k.session("viewer"));
      expect(socket.socket.connected).toBe(true);
      await subscribed(socket, LIVE);
    });

    it("accepts an API token and lets it subscribe", async () => {
      const socket = await connectSocket(k.url, await k.token("viewer"));
      expect(socket.socket.connected).toBe(true);
      await subscribed(socket, LIVE);
    });

    it("accepts the bootstrap admin token", async () => {
      const socket = await connectSocket(k.url, k.adminToken);
      await subscribed(socket, ADMIN_FEED);
    });
  });

  describe("permission per channel", () => {
    it("refuses admin-feed (ManageSystem) to a viewer and to an operator", async () => {
      for (const role of ["viewer", "operator"] as const) {
        const socket = await connectSocket(k.url, await k.token(role));
        const ack = await socket.subscribe(ADMIN_FEED);
        expect(ack).toEqual({ ok: false, error: { code: "permission_denied", message: expect.any(String) } });
        // The same socket may still use the read channel.
        await subscribed(socket, LIVE);
      }
    });

    it("grants admin-feed to an admin session and to an admin API token", async () => {
      await subscribed(await connectSocket(k.url, await k.session("admin")), ADMIN_FEED);
      await subscribed(await connectSocket(k.url, await k.token("admin")), ADMIN_FEED);
    });

    it("answers unknown_channel for a channel no plugin declared", async () => {
      const socket = await connectSocket(k.url, k.adminToken);
      for (const channel of ["fixture-widgets.nope", "live", "no-such-plugin.live", ""]) {
        expect(await socket.subscribe(channel)).toEqual({ ok: false, error: { code: "unknown_channel", message: expect.any(String) } });
      }
      expect(await socket.subscribe({ channel: 42 })).toEqual({ ok: false, error: { code: "unknown_channel", message: expect.any(String) } });
      expect(await socket.unsubscribe("fixture-widgets.nope")).toEqual({ ok: false, error: { code: "unknown_channel", message: expect.any(String) } });
    });
  });

  describe("scoped delivery", () => {
    const folderA = randomUUID();
    const folderB = randomUUID();
    let all: TestSocket;
    let onlyA: TestSocket;
    let onlyB: TestSocket;
    let bothAB: TestSocket;
    let admin: TestSocket;
    let adminScopedB: TestSocket;
    let silent: TestSocket;

    const scopeOf = (...folders: string[]): Scope => ({ folders });

    beforeEach(async () => {
      all = await subscribed(await connectSocket(k.url, await k.token("viewer", "All")), LIVE);
      onlyA = await subscribed(await connectSocket(k.url, await k.token("viewer", scopeOf(folderA))), LIVE);
      onlyB = await subscribed(await connectSocket(k.url, await k.session("viewer", scopeOf(folderB))), LIVE);
      bothAB = await subscribed(await connectSocket(k.url, await k.session("operator", scopeOf(folderA, folderB))), LIVE);
      admin = await subscribed(await connectSocket(k.url, k.adminToken), ADMIN_FEED);
      adminScopedB = await subscribed(await connectSocket(k.url, await k.token("admin", scopeOf(folderB))), ADMIN_FEED);
      // Connected with full rights but subscribed to nothing.
      silent = await connectSocket(k.url, k.adminToken);
      // Viewers ask for admin-feed too; the refusal must also mean no delivery.
      for (const s of [all, onlyA, onlyB]) expect((await s.subscribe(ADMIN_FEED)).ok).toBe(false);
    });

    it("delivers a folder-A event to scope All and to folder-A sockets, not to folder-B sockets", async () => {
      const message = uniqueMessage("folder-a");
      await publish(k.url, message, folderA);
      expect(await all.waitFor(WIDGET, withMessage(message))).toEqual({ message, folder_id: folderA });
      expect(await onlyA.waitFor(WIDGET, withMessage(message))).toEqual({ message, folder_id: folderA });
      expect(await bothAB.waitFor(WIDGET, withMessage(message))).toEqual({ message, folder_id: folderA });
      await onlyB.expectNone(WIDGET, withMessage(message), QUIET_MS);
      // A socket in several folder rooms gets the event once.
      expect(bothAB.received(WIDGET, withMessage(message))).toHaveLength(1);
      expect(all.received(WIDGET, withMessage(message))).toHaveLength(1);
    });

    it("delivers a folder-B event to scope All and to folder-B sockets, not to folder-A sockets", async () => {
      const message = uniqueMessage("folder-b");
      await publish(k.url, message, folderB);
      await all.waitFor(WIDGET, withMessage(message));
      expect(await onlyB.waitFor(WIDGET, withMessage(message))).toEqual({ message, folder_id: folderB });
      await bothAB.waitFor(WIDGET, withMessage(message));
      await onlyA.expectNone(WIDGET, withMessage(message), QUIET_MS);
    });

    it("delivers an event with no folder only to scope All", async () => {
      const message = uniqueMessage("root");
      await publish(k.url, message);
      expect(await all.waitFor(WIDGET, withMessage(message))).toEqual({ message, folder_id: null });
      await Promise.all([onlyA, onlyB, bothAB].map((s) => s.expectNone(WIDGET, withMessage(message), QUIET_MS)));
    });

    it("delivers an event for a folder outside every scope only to scope All", async () => {
      const message = uniqueMessage("elsewhere");
      await publish(k.url, message, randomUUID());
      await all.waitFor(WIDGET, withMessage(message));
      await Promise.all([onlyA, onlyB, bothAB].map((s) => s.expectNone(WIDGET, withMessage(message), QUIET_MS)));
    });

    it("delivers admin-feed events only to admin subscribers (folder scope does not narrow an unscoped channel)", async () => {
      const message = uniqueMessage("audit");
      await publish(k.url, message, folderA);
      expect(await admin.waitFor(AUDIT, withMessage(message))).toEqual({ message });
      expect(await adminScopedB.waitFor(AUDIT, withMessage(message))).toEqual({ message });
      // Control: the live subscribers did get the live event of the same publish.
      await all.waitFor(WIDGET, withMessage(message));
      await Promise.all([all, onlyA, onlyB, bothAB, silent].map((s) => s.expectNone(AUDIT, withMessage(message), QUIET_MS)));
      // Admins subscribed only to admin-feed do not get live events; an unsubscribed socket gets nothing.
      expect(admin.received(WIDGET)).toEqual([]);
      expect(adminScopedB.received(WIDGET)).toEqual([]);
      expect(silent.events).toEqual([]);
    });

    it("stops delivery after unsubscribe (scope All and folder-scoped)", async () => {
      const first = uniqueMessage("before-unsub");
      await publish(k.url, first, folderA);
      await all.waitFor(WIDGET, withMessage(first));
      await onlyA.waitFor(WIDGET, withMessage(first));
      await admin.waitFor(AUDIT, withMessage(first));

      expect(await all.unsubscribe(LIVE)).toEqual({ ok: true, channel: LIVE });
      expect(await onlyA.unsubscribe(LIVE)).toEqual({ ok: true, channel: LIVE });
      expect(await admin.unsubscribe(ADMIN_FEED)).toEqual({ ok: true, channel: ADMIN_FEED });

      const second = uniqueMessage("after-unsub");
      await publish(k.url, second, folderA);
      // Controls still subscribed receive it...
      await bothAB.waitFor(WIDGET, withMessage(second));
      await adminScopedB.waitFor(AUDIT, withMessage(second));
      // ...the ones that left do not.
      await Promise.all([
        all.expectNone(WIDGET, withMessage(second), QUIET_MS),
        onlyA.expectNone(WIDGET, withMessage(second), QUIET_MS),
        admin.expectNone(AUDIT, withMessage(second), QUIET_MS),
      ]);

      // Subscribing again resumes delivery.
      await subscribed(onlyA, LIVE);
      const third = uniqueMessage("resubscribed");
      await publish(k.url, third, folderA);
      await onlyA.waitFor(WIDGET, withMessage(third));
      expect(onlyA.received(WIDGET, withMessage(third))).toHaveLength(1);
    });

    it("does not deliver to a socket after it disconnects, while others keep receiving", async () => {
      onlyA.close();
      const message = uniqueMessage("after-close");
      await publish(k.url, message, folderA);
      await bothAB.waitFor(WIDGET, withMessage(message));
      await onlyA.expectNone(WIDGET, withMessage(message), QUIET_MS);
    });
  });
});

describe("realtime in public-dashboard mode", () => {
  let k: TestKernel;

  beforeAll(async () => {
    k = await startTestKernel({ overrides: { publicDashboard: true }, plugins: [fixtureWidgetsPlugin] });
  });
  afterAll(async () => {
    closeAllSockets();
    await k?.stop();
  });

  it("accepts an anonymous connection for read channels only", async () => {
    const anon = await connectSocket(k.url);
    expect(anon.socket.connected).toBe(true);
    await subscribed(anon, LIVE);
    expect(await anon.subscribe(ADMIN_FEED)).toEqual({ ok: false, error: { code: "permission_denied", message: expect.any(String) } });

    const admin = await subscribed(await connectSocket(k.url, k.adminToken), ADMIN_FEED);
    const message = uniqueMessage("public");
    await publish(k.url, message, randomUUID());
    expect(await anon.waitFor(WIDGET, withMessage(message))).toEqual({ message, folder_id: expect.any(String) });
    await admin.waitFor(AUDIT, withMessage(message));
    await anon.expectNone(AUDIT, withMessage(message), QUIET_MS);
  });

  it("still refuses a bad token (a token that is given must be valid)", async () => {
    const err = await connectRefused(k.url, "bogus-" + randomBytes(8).toString("hex"));
    expect(err.data).toEqual({ code: "unauthorized" });
  });

  it("still accepts real tokens with their own rights", async () => {
    const admin = await connectSocket(k.url, await k.token("admin"));
    await subscribed(admin, ADMIN_FEED);
  });
});

describe("realtime across two replicas on one database", () => {
  let databaseUrl: string;
  let r1: SpawnedKernel | undefined;
  let r2: SpawnedKernel | undefined;

  async function apiToken(role: string, scope: Scope): Promise<string> {
    const res = await request(r1!.url)
      .post("/api/v1/tokens")
      .set("Authorization", `Bearer ${BOOTSTRAP_TOKEN}`)
      .send({ name: `replica-${role}-${++seq}`, role, scope });
    expect(res.status).toBe(201);
    return (res.body as { token: string }).token;
  }

  const replicaEnv = (url: string) => ({ DATABASE_URL: url, NMS_PLUGINS: FIXTURE_WIDGETS, NMS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN, NMS_LOG_LEVEL: "warn" });

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    // One after the other, so these tests are about the adapter; booting together is its own test below.
    r1 = await spawnKernel({ env: replicaEnv(databaseUrl) });
    r2 = await spawnKernel({ env: replicaEnv(databaseUrl) });
  }, 90_000);

  afterAll(async () => {
    closeAllSockets();
    const codes = await Promise.all([r1?.stop(), r2?.stop()]);
    for (const code of codes) if (code !== undefined) expect(code).toBe(0);
  }, 60_000);

  it("are two processes on different ports", () => {
    expect(r1!.url).not.toBe(r2!.url);
    expect(r1!.child.pid).not.toBe(r2!.child.pid);
  });

  it("delivers an event published on replica 1 to subscribers on replica 2 (and on replica 1)", async () => {
    const onR2 = await subscribed(await connectSocket(r2!.url, BOOTSTRAP_TOKEN), LIVE);
    await subscribed(onR2, ADMIN_FEED);
    const onR1 = await subscribed(await connectSocket(r1!.url, BOOTSTRAP_TOKEN), LIVE);

    const message = uniqueMessage("cross");
    await publish(r1!.url, message);
    expect(await onR2.waitFor(WIDGET, withMessage(message), 10_000)).toEqual({ message, folder_id: null });
    expect(await onR2.waitFor(AUDIT, withMessage(message), 10_000)).toEqual({ message });
    expect(await onR1.waitFor(WIDGET, withMessage(message), 10_000)).toEqual({ message, folder_id: null });
    // Exactly once on each side: the publishing replica does not echo its own broadcast.
    await sleep(QUIET_MS);
    expect(onR2.received(WIDGET, withMessage(message))).toHaveLength(1);
    expect(onR1.received(WIDGET, withMessage(message))).toHaveLength(1);
  });

  it("keeps folder scope across replicas", async () => {
    const folderA = randomUUID();
    const folderB = randomUUID();
    const a = await subscribed(await connectSocket(r2!.url, await apiToken("viewer", { folders: [folderA] })), LIVE);
    const b = await subscribed(await connectSocket(r2!.url, await apiToken("viewer", { folders: [folderB] })), LIVE);
    const viewer = await connectSocket(r2!.url, await apiToken("viewer", "All"));
    await subscribed(viewer, LIVE);
    expect((await viewer.subscribe(ADMIN_FEED)).ok).toBe(false);

    const message = uniqueMessage("cross-scoped");
    await publish(r1!.url, message, folderA);
    expect(await a.waitFor(WIDGET, withMessage(message), 10_000)).toEqual({ message, folder_id: folderA });
    await viewer.waitFor(WIDGET, withMessage(message), 10_000);
    await Promise.all([b.expectNone(WIDGET, withMessage(message), QUIET_MS), viewer.expectNone(AUDIT, withMessage(message), QUIET_MS)]);
  });

  it("carries a payload over the 8000-byte NOTIFY limit intact (attachment table)", async () => {
    const onR2 = await subscribed(await connectSocket(r2!.url, BOOTSTRAP_TOKEN), LIVE);
    await subscribed(onR2, ADMIN_FEED);
    const [{ n: before }] = await rawQuery<{ n: number }>(databaseUrl, "SELECT count(*)::int AS n FROM core.socket_io_attachments");

    // ~20000 characters, mixed ASCII and multi-byte, so truncation or re-encoding would show.
    const big = `big-${++seq}-` + randomBytes(9000).toString("hex") + "é✓🚀".repeat(500);
    expect(big.length).toBeGreaterThan(20_000);
    await publish(r1!.url, big);

    expect(await onR2.waitFor(WIDGET, withMessage(big), 10_000)).toEqual({ message: big, folder_id: null });
    expect(await onR2.waitFor(AUDIT, withMessage(big), 10_000)).toEqual({ message: big });
    const [{ n: after }] = await rawQuery<{ n: number }>(databaseUrl, "SELECT count(*)::int AS n FROM core.socket_io_attachments");
    expect(after).toBeGreaterThan(before);
  });

  it("delivers to a replica-2 subscriber when replica 1 has no subscriber at all", async () => {
    const onR2 = await subscribed(await connectSocket(r2!.url, BOOTSTRAP_TOKEN), ADMIN_FEED);
    const message = uniqueMessage("only-remote");
    await publish(r1!.url, message);
    expect(await onR2.waitFor(AUDIT, withMessage(message), 10_000)).toEqual({ message });
  });

  it("all become ready when several replicas boot at the same time on a fresh database", async () => {
    const fresh = await createTestDatabase();
    const started = await Promise.allSettled([0, 1, 2].map(() => spawnKernel({ env: replicaEnv(fresh) })));
    const up = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    try {
      const failures = started.flatMap((s) => (s.status === "rejected" ? [String((s.reason as Error).message).slice(0, 1500)] : []));
      expect(failures).toEqual([]);
      // And they form one realtime cluster: publish on the first, receive on the last.
      const sub = await subscribed(await connectSocket(up[2].url, BOOTSTRAP_TOKEN), ADMIN_FEED);
      const message = uniqueMessage("fresh-cluster");
      await publish(up[0].url, message);
      expect(await sub.waitFor(AUDIT, withMessage(message), 10_000)).toEqual({ message });
    } finally {
      closeAllSockets();
      await Promise.all(up.map((k) => k.stop()));
    }
  }, 120_000);
});
