/**
 * The core's UDP reader (core/util/udpReader.ts): a socket read by a worker thread. Datagrams arrive in order with
 * their sender; answers leave from the listening socket; a bind failure keeps its errno code; while the main thread is blocked the worker keeps reading (a
 * socket read on the main thread, given the same buffer, loses most of the same burst); past its backlog it drops and
 * counts; close() ends it. Each of it read with recvmmsg (the batched socket) and with dgram.
 */
import { fork } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startUdpReader, type UdpReaderOptions } from "../../core/util/udpReader.js";

const dir = mkdtempSync(join(tmpdir(), "nms-udp-reader-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A sender in its own process (so it keeps sending while this thread is blocked): `count` datagrams at `rate` a second. */
const SENDER = join(dir, "send.mjs");
writeFileSync(
  SENDER,
  `import { createSocket } from "node:dgram";
const [port, count, rate] = process.argv.slice(2).map(Number);
const s = createSocket("udp4");
const t0 = performance.now();
for (let i = 0; i < count; i++) {
  s.send("<14>1 - host app - - - datagram " + i + " " + "x".repeat(120), port, "127.0.0.1");
  if (i % 50 === 49) {
    const wait = t0 + ((i + 1) * 1000) / rate - performance.now();
    await new Promise((r) => (wait > 0 ? setTimeout(r, wait) : setImmediate(r)));
  }
}
await new Promise((r) => setTimeout(r, 100));
s.close();
`,
);

/** Sends from a child process while this thread is blocked for `blockMs` (no CPU used: Atomics.wait). */
async function burstWhileBlocked(port: number, count: number, rate: number, blockMs: number): Promise<void> {
  const child = fork(SENDER, [String(port), String(count), String(rate)], { stdio: "ignore" });
  await new Promise((r) => child.once("spawn", r));
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, blockMs);
  await new Promise((r) => child.once("exit", r));
}

const settle = () => new Promise((r) => setTimeout(r, 500));

/** Datagrams the kernel dropped on the socket bound to 127.0.0.1:port (its buffer full), from /proc/net/udp. */
function kernelDrops(port: number): number {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  let drops = 0;
  for (const line of readFileSync("/proc/net/udp", "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length > 12 && f[1].endsWith(hex)) drops += Number(f[f.length - 1]);
  }
  return drops;
}

// Both ways of reading: recvmmsg through koffi (this machine kind has its prebuilt binary) and Node's dgram.
describe.each([true, false])("batched %s", (batched) => {
  const start = (o: UdpReaderOptions) => startUdpReader({ ...o, batched });

  it("delivers datagrams in order with the sender's address and port", async () => {
    const got: [string, string, number][] = [];
    const r = await start({ type: "udp4", host: "127.0.0.1", port: 0, onDatagram: (d, a, p) => got.push([d.toString(), a, p]) });
    const s = createSocket("udp4");
    await new Promise<void>((res) => s.bind(0, "127.0.0.1", () => res()));
    for (let i = 0; i < 100; i++) await new Promise<void>((res) => s.send(`m${i}`, r.port, "127.0.0.1", () => res()));
    await settle();
    expect(got.map(([d]) => d)).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`));
    expect(new Set(got.map(([, a, p]) => `${a}:${p}`))).toEqual(new Set([`127.0.0.1:${s.address().port}`]));
    expect(r.batched).toBe(batched);
    s.close();
    await r.close();
  });

  it("answers from the listening socket itself (the port the sender wrote to), with the bytes as they were when sent", async () => {
    const r = await start({
      type: "udp4",
      host: "127.0.0.1",
      port: 0,
      onDatagram: (d, a, p) => {
        const answer = Buffer.from(`ack ${d.toString()}`);
        r.send(answer, p, a);
        answer.fill(0); // the reader took a copy
      },
    });
    const s = createSocket("udp4");
    await new Promise<void>((res) => s.bind(0, "127.0.0.1", () => res()));
    const answers: [string, number][] = [];
    s.on("message", (m, rinfo) => answers.push([m.toString(), rinfo.port]));
    for (const m of ["one", "two"]) s.send(m, r.port, "127.0.0.1");
    await settle();
    expect(answers).toEqual([
      ["ack one", r.port],
      ["ack two", r.port],
    ]);
    s.close();
    await r.close();
  });

  it("reports a failed answer through onError", async () => {
    const errors: Error[] = [];
    const r = await start({ type: "udp4", host: "127.0.0.1", port: 0, onDatagram: () => undefined, onError: (e) => errors.push(e) });
    r.send(Buffer.alloc(70_000), 9, "127.0.0.1"); // over the largest UDP payload
    await settle();
    expect(errors.map((e) => (e as Error & { code?: string }).code)).toEqual(["EMSGSIZE"]);
    await r.close();
  });

  it("mirrors every datagram as read to each target, counts them, counts a closed port's refusals as errors, and tells each datagram's generation", async () => {
    const sink = createSocket("udp4");
    await new Promise<void>((res) => sink.bind(0, "127.0.0.1", () => res()));
    const relayed: string[] = [];
    sink.on("message", (m) => relayed.push(m.toString()));
    const generations: [string, number][] = [];
    const r = await start({ type: "udp4", host: "127.0.0.1", port: 0, onDatagram: (m, _a, _p, gen) => void generations.push([m.toString(), gen]) });
    // A port nobody listens on: bound, then closed; taken after the reader's, so it cannot be the reader's own port (a
    // reader given its own port as a target skips it, below, but this case is about refusals).
    const gone = createSocket("udp4");
    await new Promise<void>((res) => gone.bind(0, "127.0.0.1", () => res()));
    const closedPort = gone.address().port;
    gone.close();
    const s = createSocket("udp4");
    // Read before any target: generation 0, relayed nowhere.
    await new Promise<void>((res) => s.send("first", r.port, "127.0.0.1", () => res()));
    await settle();
    r.mirror(
      [
        { id: "live", address: "127.0.0.1", port: sink.address().port },
        { id: "dead", address: "127.0.0.1", port: closedPort },
      ],
      5,
    );
    for (let i = 0; i < 50; i++) {
      await new Promise<void>((res) => s.send(`m${i}`, r.port, "127.0.0.1", () => res()));
      await new Promise((res) => setTimeout(res, 2));
    }
    await settle();
    expect(relayed).toEqual(Array.from({ length: 50 }, (_, i) => `m${i}`));
    expect(r.mirrorCounts().get("live")).toEqual({ sent: 50, errors: 0 });
    expect(r.mirrorCounts().get("dead")?.sent).toBe(50);
    expect(r.mirrorCounts().get("dead")?.errors).toBeGreaterThan(0);

    // A target taken off the list gets nothing more.
    r.mirror([{ id: "dead", address: "127.0.0.1", port: closedPort }], 6);
    await new Promise<void>((res) => s.send("after", r.port, "127.0.0.1", () => res()));
    await settle();
    expect(relayed).toHaveLength(50);
    expect(r.mirrorCounts().get("dead")?.sent).toBe(51);
    // No target left: generation 0 again.
    r.mirror([], 7);
    await new Promise<void>((res) => s.send("last", r.port, "127.0.0.1", () => res()));
    await settle();
    expect(generations).toEqual([["first", 0], ...Array.from({ length: 50 }, (_, i): [string, number] => [`m${i}`, 5]), ["after", 6], ["last", 0]]);
    s.close();
    sink.close();
    await r.close();
  });

  it("skips a mirror target that is its own port (it would loop), and says so", async () => {
    let got = 0;
    const errors: Error[] = [];
    const r = await start({ type: "udp4", host: "127.0.0.1", port: 0, onDatagram: () => void got++, onError: (e) => errors.push(e) });
    r.mirror([{ id: "self", address: "127.0.0.1", port: r.port }], 1);
    const s = createSocket("udp4");
    await new Promise<void>((res) => s.send("once", r.port, "127.0.0.1", () => res()));
    await settle();
    expect(got).toBe(1);
    expect(errors.map((e) => e.message)).toEqual([`mirror to 127.0.0.1:${r.port} skipped: it is this socket itself`]);
    expect(r.mirrorCounts().get("self")).toBeUndefined();
    s.close();
    await r.close();
  });

  it("rejects a port in use with its errno code", async () => {
    const s = createSocket("udp4");
    await new Promise<void>((res) => s.bind(0, "127.0.0.1", () => res()));
    await expect(start({ type: "udp4", host: "127.0.0.1", port: s.address().port, onDatagram: () => undefined })).rejects.toMatchObject({
      code: "EADDRINUSE",
    });
    s.close();
  });

  it("keeps reading while the main thread is blocked; a main-thread socket with the same buffer loses the burst", async () => {
    const count = 10_000;
    const rcvbuf = 512 << 10; // the kernel doubles it: about 1 MiB, some 800 datagrams of this size
    let viaWorker = 0;
    const r = await start({ type: "udp4", host: "127.0.0.1", port: 0, recvBufferSize: rcvbuf, onDatagram: () => void viaWorker++ });
    await burstWhileBlocked(r.port, count, 10_000, 1500);
    await settle();
    await r.close();

    let onMain = 0;
    const s = createSocket("udp4");
    await new Promise<void>((res) => s.bind(0, "127.0.0.1", () => res()));
    s.setRecvBufferSize(rcvbuf);
    s.on("message", () => void onMain++);
    await burstWhileBlocked(s.address().port, count, 10_000, 1500);
    await settle();
    s.close();

    expect(viaWorker).toBe(count);
    expect(onMain).toBeLessThan(count * 0.5);
  }, 30_000);

  it("past its backlog the worker drops and counts, and close() ends it", async () => {
    let received = 0;
    let dropped = 0;
    const r = await start({
      type: "udp4",
      host: "127.0.0.1",
      port: 0,
      maxBacklogBytes: 64 << 10,
      // Room for a stall of the reader thread itself on a loaded machine (what this tests is the worker's backlog).
      recvBufferSize: 4 << 20,
      onDatagram: () => void received++,
      onBacklogDrops: (n) => void (dropped += n),
    });
    await burstWhileBlocked(r.port, 5000, 5_000, 1000);
    await settle();
    expect({ dropped: dropped > 0, kernel: kernelDrops(r.port) }).toEqual({ dropped: true, kernel: 0 });
    expect(received + dropped).toBe(5000);
    expect(r.backlogDrops()).toBe(dropped);
    await r.close();
    // Closed: the port is free again.
    const again = createSocket("udp4");
    await new Promise<void>((res, rej) => (again.once("error", rej), again.bind(r.port, "127.0.0.1", () => res())));
    again.close();
  }, 30_000);
});
