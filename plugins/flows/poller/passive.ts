import { createSocket } from "node:dgram";
import type { PassiveEnvironment, PassiveReceiver, RunningPassive } from "../../polling/contract.js";
import { TurnBatcher } from "../../../core/index.js";
import type { ReceivedDatagram } from "../contract.js";
import type { FlowsConfig } from "../context.js";
import { FlowDecoder } from "../decode/decoder.js";
import { TemplateCache } from "../decode/templates.js";

const BATCH = 200;
const FLUSH_MS = 200;
/** Datagrams waiting for a POST in flight; past this they are dropped (fire-and-forget, never buffered). */
const MAX_WAITING = 5000;

/**
 * The flow listener on a remote poller: the same port as on the core (`pluginConfig.flows.udp`), forwarding each export
 * datagram as it came (base64, with the exporter's address) to the core's POST /flow/forwarded, which decodes it with
 * the templates every collector shares. Nothing is kept across a partition: a batch the core does not take is lost.
 */
export const flowsPassiveReceiver: PassiveReceiver = {
  name: "flows",
  async start(env: PassiveEnvironment): Promise<RunningPassive> {
    const cfg = env.pluginConfig<FlowsConfig>("flows");
    if (!cfg.enabled || cfg.udp === null) return { listeners: [], stop: async () => undefined };
    const any = cfg.bindAddress === "0.0.0.0";
    const socket = createSocket({ type: any || cfg.bindAddress.includes(":") ? "udp6" : "udp4", ipv6Only: false });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once("error", reject);
        socket.bind(cfg.udp!, any ? "::" : cfg.bindAddress, () => (socket.off("error", reject), resolve()));
      });
    } catch (err) {
      socket.close();
      env.log.error("flow listener not bound", { port: cfg.udp, error: (err as Error).message });
      return { listeners: [], stop: async () => undefined };
    }
    let waiting: { exporter: string; data: string }[] = [];
    let inFlight = 0;
    let lost = 0;
    let sending: Promise<void> = Promise.resolve();
    let timer: NodeJS.Timeout | null = null;
    let lastReport = 0;
    /** Counts lost datagrams; says so at most once a minute (a partition would otherwise log every batch). */
    const lose = (n: number, status: number | null) => {
      lost += n;
      if (Date.now() - lastReport < 60_000) return;
      lastReport = Date.now();
      env.log.warn("flow datagrams lost: the core did not take them (they are not buffered)", { lost_total: lost, status });
    };
    const send = () => {
      if (timer) clearTimeout(timer);
      timer = null;
      while (waiting.length) {
        const batch = waiting.slice(0, BATCH);
        waiting = waiting.slice(BATCH);
        inFlight += batch.length;
        sending = sending.then(async () => {
          const status = await env.post("/flow/forwarded", { poller_id: env.pollerId, pool: env.pool, datagrams: batch });
          inFlight -= batch.length;
          if (status !== 202) lose(batch.length, status);
        });
      }
    };
    // What this poller receives also goes on its own bus, for a local tee (the forwarding plugin's pool destinations):
    // decoded here only while something listens, with a template cache of its own.
    const received = new TurnBatcher(env.bus, "flows.received", (datagrams: ReceivedDatagram[]) => ({ datagrams }));
    let decoder: FlowDecoder | null = null;
    socket.on("message", (buf, rinfo) => {
      const exporter = rinfo.address.startsWith("::ffff:") ? rinfo.address.slice(7) : rinfo.address;
      if (env.bus.listenerCount("flows.received") > 0) {
        decoder ??= new FlowDecoder({ templates: new TemplateCache(), pendingMaxMs: cfg.pendingMaxMs });
        const now = Date.now();
        const { records } = decoder.decode(buf, exporter, now);
        received.push({ exporter, received_at_ms: now, bytes: buf, records });
      }
      if (waiting.length + inFlight >= MAX_WAITING) return lose(1, null);
      waiting.push({ exporter, data: buf.toString("base64") });
      if (waiting.length >= BATCH) send();
      else timer ??= setTimeout(send, FLUSH_MS);
    });
    const port = socket.address().port;
    env.log.info("flow listener bound", { port });
    return {
      listeners: [`flows.udp:${port}`],
      stop: async () => {
        await new Promise<void>((r) => socket.close(() => r()));
        send();
        await sending;
      },
    };
  },
};
