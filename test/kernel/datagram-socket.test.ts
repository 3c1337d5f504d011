/**
 * The readers' UDP socket (core/util/datagramSocket.ts): read with recvmmsg and relayed with sendmmsg through koffi
 * where its prebuilt binary loads (this machine kind), with dgram elsewhere. The batched socket must give what dgram
 * gives: the sender's address written as Node writes it (IPv4, IPv6, IPv4 on a dual-stack socket), every byte of
 * datagrams of any size up to the largest, in order, over many batches, and relays that keep order and size; and the
 * socket closes with its thread, however the thread ends.
 */
import { execFileSync } from "node:child_process";
import { createSocket, type Socket } from "node:dgram";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { projectRoot } from "../../core/paths.js";
import { compiledModuleUrl } from "../../core/util/workerModule.js";
import { batchedUdpAvailable, bindDatagramSocket, type DatagramSocket } from "../../core/util/datagramSocket.js";

const settle = (ms = 300) => new Promise((r) => setTimeout(r, ms));

async function sender(type: "udp4" | "udp6", host: string): Promise<Socket> {
  const s = createSocket(type);
  await new Promise<void>((res) => s.bind(0, host, () => res()));
  return s;
}

const send = (s: Socket, data: Buffer | string, port: number, host: string) =>
  new Promise<void>((res, rej) => s.send(data, port, host, (err) => (err ? rej(err) : res())));

/** Binds the socket both ways and answers what each received: [payload as hex, address, port]. */
async function receiveBothWays(
  o: { type: "udp4" | "udp6"; host: string; ipv6Only?: boolean },
  traffic: (port: number) => Promise<void>,
): Promise<Record<"batched" | "dgram", [string, string, number][]>> {
  const out = { batched: [] as [string, string, number][], dgram: [] as [string, string, number][] };
  for (const way of ["batched", "dgram"] as const) {
    const got = out[way];
    const s = await bindDatagramSocket({
      ...o,
      port: 0,
      batched: way === "batched",
      onMessage: (m, a, p) => got.push([m.toString("hex"), a, p]),
      onError: (e) => {
        throw e;
      },
    });
    expect(s.batched).toBe(way === "batched");
    await traffic(s.address().port);
    await settle();
    await s.close();
  }
  return out;
}

it("loads the batched socket on this machine kind", () => {
  expect(batchedUdpAvailable()).toBe(true);
});

it("names IPv4, IPv6 and dual-stack senders as dgram does", async () => {
  const s4 = await sender("udp4", "127.0.0.1");
  const s6 = await sender("udp6", "::1");
  const v4 = await receiveBothWays({ type: "udp4", host: "127.0.0.1" }, (port) => send(s4, "four", port, "127.0.0.1"));
  const dual = await receiveBothWays({ type: "udp6", host: "::" }, async (port) => {
    await send(s4, "mapped", port, "127.0.0.1");
    await send(s6, "six", port, "::1");
  });
  expect(v4.batched).toEqual(v4.dgram);
  expect(v4.batched).toEqual([[Buffer.from("four").toString("hex"), "127.0.0.1", s4.address().port]]);
  expect(dual.batched).toEqual(dual.dgram);
  expect(dual.batched.map(([, a]) => a)).toEqual(["::ffff:127.0.0.1", "::1"]);
  s4.close();
  s6.close();
});

it("receives datagrams of every size in order across many batches, and relays them unchanged", async () => {
  // Sizes from empty to the largest IPv4 UDP payload; 300 datagrams is more than four recvmmsg calls.
  const sizes = [0, 1, 200, 1472, 9000, 65507, ...Array.from({ length: 294 }, (_, i) => 1 + ((i * 977) % 3000))];
  const payloads = sizes.map((n, i) => Buffer.alloc(n, i % 251));
  const sink = await sender("udp4", "127.0.0.1");
  const relayed: Buffer[] = [];
  sink.on("message", (m) => relayed.push(Buffer.from(m)));
  const got: Buffer[] = [];
  const s: DatagramSocket = await bindDatagramSocket({
    type: "udp4",
    host: "127.0.0.1",
    port: 0,
    onMessage: (m) => got.push(Buffer.from(m)),
    onError: (e) => {
      throw e;
    },
  });
  expect(s.batched).toBe(true);
  const relay = s.relay("127.0.0.1", sink.address().port);
  s.setRelays([relay]);
  const from = await sender("udp4", "127.0.0.1");
  // Twenty at a time without waiting between them, so a read finds many (more would overflow the default buffer).
  for (let i = 0; i < payloads.length; i += 20) {
    await Promise.all(payloads.slice(i, i + 20).map((p) => send(from, p, s.address().port, "127.0.0.1")));
    await settle(5);
  }
  await settle(500);
  expect(got.map((b) => b.length)).toEqual(sizes);
  expect(got).toEqual(payloads);
  expect(relayed.map((b) => b.length)).toEqual(sizes);
  expect(relayed).toEqual(payloads);
  expect({ sent: relay.sent, errors: relay.errors }).toEqual({ sent: sizes.length, errors: 0 });
  expect(s.received).toBe(sizes.length);
  relay.close();
  await s.close();
  from.close();
  sink.close();
});

it.each(["batched", "dgram"] as const)("without onMessage only relays, and counts what it read (%s)", async (way) => {
  const sink = await sender("udp4", "127.0.0.1");
  const relayed: Buffer[] = [];
  sink.on("message", (m) => relayed.push(Buffer.from(m)));
  const s = await bindDatagramSocket({
    type: "udp4",
    host: "127.0.0.1",
    port: 0,
    batched: way === "batched",
    onError: (e) => {
      throw e;
    },
  });
  expect(s.batched).toBe(way === "batched");
  const from = await sender("udp4", "127.0.0.1");
  // Read before any relay is set: counted, sent nowhere.
  await send(from, "before", s.address().port, "127.0.0.1");
  await settle(100);
  const relay = s.relay("127.0.0.1", sink.address().port);
  s.setRelays([relay]);
  const payloads = Array.from({ length: 200 }, (_, i) => Buffer.alloc(1 + ((i * 131) % 1500), i % 251));
  for (let i = 0; i < payloads.length; i += 20) {
    await Promise.all(payloads.slice(i, i + 20).map((p) => send(from, p, s.address().port, "127.0.0.1")));
    await settle(5);
  }
  await settle(500);
  expect(relayed).toEqual(payloads);
  expect(s.received).toBe(payloads.length + 1);
  expect({ sent: relay.sent, errors: relay.errors }).toEqual({ sent: payloads.length, errors: 0 });
  relay.close();
  await s.close();
  from.close();
  sink.close();
});

it("binds a host name too, and rejects a port in use with its errno code either way", async () => {
  const named = await bindDatagramSocket({ type: "udp4", host: "localhost", port: 0, onMessage: () => undefined, onError: () => undefined });
  expect(named.batched).toBe(true);
  const taken = named.address().port;
  for (const batched of [true, false]) {
    await expect(
      bindDatagramSocket({ type: "udp4", host: "127.0.0.1", port: taken, batched, onMessage: () => undefined, onError: () => undefined }),
    ).rejects.toMatchObject({ code: "EADDRINUSE" });
  }
  await named.close();
});

it("leaves no socket behind, and the process alive, when a reader thread is terminated with its socket open", () => {
  // In a process of its own, koffi loaded by the reader thread alone (a first version, which read on a poll handle of
  // koffi's, aborted the process here).
  const url = compiledModuleUrl("./datagramSocket.js", pathToFileURL(join(projectRoot(), "core/util/x.ts")).href).href;
  const script = `
    import { readFileSync } from "node:fs";
    import { Worker } from "node:worker_threads";
    const open = (port) => readFileSync("/proc/net/udp", "utf8").includes(":" + port.toString(16).toUpperCase().padStart(4, "0") + " ");
    const w = new Worker(\`import(${JSON.stringify(url)}).then(async ({ bindDatagramSocket }) => {
      const s = await bindDatagramSocket({ type: "udp4", host: "127.0.0.1", port: 0, reusePort: true, onMessage: () => undefined, onError: () => undefined });
      (await import("node:worker_threads")).parentPort.postMessage({ port: s.address().port, batched: s.batched });
    });\`, { eval: true });
    const { port, batched } = await new Promise((r) => w.once("message", r));
    const before = open(port);
    await w.terminate();
    console.log(JSON.stringify({ batched, before, after: open(port) }));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(JSON.parse(out)).toEqual({ batched: true, before: true, after: false });
});

it("forces the receive buffer past net.core.rmem_max where the process may (root), as rsyslog does; dgram only asks", async () => {
  const cap = Number(readFileSync("/proc/sys/net/core/rmem_max", "utf8"));
  const granted: Record<string, number> = {};
  for (const batched of [true, false]) {
    const s = await bindDatagramSocket({
      type: "udp4",
      host: "127.0.0.1",
      port: 0,
      batched,
      recvBufferSize: cap * 2,
      onMessage: () => undefined,
      onError: () => undefined,
    });
    granted[String(batched)] = s.recvBufferSize();
    await s.close();
  }
  // The kernel accounts twice what it grants.
  expect(granted).toEqual({ true: process.getuid?.() === 0 ? cap * 4 : cap * 2, false: cap * 2 });
});

it("spreads one sender's datagrams over every socket of the port with spreadOver; without it the kernel gives them all to one", async () => {
  const from = await sender("udp4", "127.0.0.1");
  const spreadCounts = async (spread: boolean): Promise<number[]> => {
    const counts = [0, 0, 0, 0];
    const socks: DatagramSocket[] = [];
    for (let i = 0; i < 4; i++)
      socks.push(
        await bindDatagramSocket({
          type: "udp4",
          host: "127.0.0.1",
          port: i === 0 ? 0 : socks[0].address().port,
          reusePort: true,
          spreadOver: spread && i === 0 ? 4 : undefined,
          onMessage: () => void counts[i]++,
          onError: (e) => {
            throw e;
          },
        }),
      );
    expect(socks[0].spread).toBe(spread);
    for (let i = 0; i < 400; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => send(from, `d${i + j}`, socks[0].address().port, "127.0.0.1")));
      await settle(5);
    }
    await settle();
    await Promise.all(socks.map((s) => s.close()));
    return counts;
  };
  const hashed = await spreadCounts(false);
  expect(hashed.reduce((a, b) => a + b, 0)).toBe(400);
  expect(hashed.filter((n) => n > 0)).toEqual([400]);
  const spread = await spreadCounts(true);
  expect(spread.reduce((a, b) => a + b, 0)).toBe(400);
  // At random, each of the four gets about 100; none gets fewer than 40 (the odds of that are below 1e-12).
  for (const n of spread) expect(n).toBeGreaterThan(40);
  from.close();
});
