/**
 * A real HAProxy (Debian's /usr/sbin/haproxy) in front of service replicas: HTTP mode, round robin without
 * stickiness, a `GET /api/v1/health/ready` check (`option httpchk`) that takes a replica out of rotation while it is
 * starting or draining, WebSocket upgrades passed through (Socket.IO), and `X-Served-By` on every answer naming the
 * replica that gave it. It runs as a child in the foreground on a free loopback port, with an admin socket the test
 * reads the servers' states from; stop() ends it and removes its folder.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../core/store/EmbeddedServer.js";

export const HAPROXY = "/usr/sbin/haproxy";

export interface HaproxyBackend {
  /** The server's name in HAProxy (and in X-Served-By). */
  name: string;
  /** The replica's base URL, http://127.0.0.1:<port>. */
  url: string;
}

export interface HaproxyOptions {
  /** The check's interval (default 300 ms): a draining replica is out of rotation within about one interval. */
  checkIntervalMs?: number;
  /** Consecutive passing checks before a server (back) is in rotation (default 2). */
  rise?: number;
}

export interface RunningHaproxy {
  /** The frontend: http://127.0.0.1:<port>. */
  url: string;
  /** The configuration it runs with (what docs/operations.md shows). */
  config: string;
  /** Each server's state as HAProxy sees it: UP, DOWN, MAINT, or a transition such as "UP 1/2". */
  states(): Promise<Map<string, string>>;
  /** Waits until every named server (default: all) is UP. */
  waitUp(names?: string[], timeoutMs?: number): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

/** The configuration for a frontend on `port` in front of `backends` (admin socket at `socket`). */
export function haproxyConfig(port: number, backends: HaproxyBackend[], socket: string, o: HaproxyOptions = {}): string {
  const inter = o.checkIntervalMs ?? 300;
  const servers = backends.map((b) => {
    const u = new URL(b.url);
    return `  server ${b.name} ${u.hostname}:${u.port} check`;
  });
  return [
    "global",
    `  stats socket ${socket} mode 600 level admin`,
    "  maxconn 2000",
    "",
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 60s",
    "  timeout server 60s",
    // A WebSocket (Socket.IO) is a tunnel once upgraded: this is its idle limit, not the HTTP one.
    "  timeout tunnel 1h",
    // A connection a stopped replica refused is tried again on another server.
    "  retries 3",
    "  option redispatch 1",
    "",
    "frontend nms",
    `  bind 127.0.0.1:${port}`,
    "  default_backend nms_core",
    "",
    "backend nms_core",
    "  balance roundrobin",
    "  option httpchk",
    "  http-check send meth GET uri /api/v1/health/ready",
    "  http-check expect status 200",
    `  default-server inter ${inter}ms fastinter ${inter}ms downinter ${inter}ms fall 1 rise ${o.rise ?? 2}`,
    "  http-response set-header X-Served-By %s",
    ...servers,
    "",
  ].join("\n");
}

async function adminCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    let out = "";
    s.on("data", (c: Buffer) => (out += c.toString("utf8")));
    s.on("end", () => resolve(out));
    s.on("error", reject);
    s.write(command + "\n");
  });
}

export async function startHaproxy(backends: HaproxyBackend[], o: HaproxyOptions = {}): Promise<RunningHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), "nms-haproxy-"));
  const port = await freePort();
  const socket = join(dir, "admin.sock");
  const config = haproxyConfig(port, backends, socket, o);
  const file = join(dir, "haproxy.cfg");
  writeFileSync(file, config);
  const check = spawnSync(HAPROXY, ["-c", "-f", file], { encoding: "utf8" });
  if (check.status !== 0) throw new Error(`haproxy refused its configuration: ${check.stdout}${check.stderr}`);
  // -db: foreground, no daemon; its children are ours to stop.
  const child: ChildProcess = spawn(HAPROXY, ["-db", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const states = async (): Promise<Map<string, string>> => {
    // CSV: pxname,svname,...,status is the 18th field.
    const csv = await adminCommand(socket, "show stat");
    const out = new Map<string, string>();
    for (const line of csv.split("\n")) {
      const f = line.split(",");
      if (f[0] === "nms_core" && f[1] !== "BACKEND" && f[1] !== "FRONTEND" && f[17]) out.set(f[1], f[17]);
    }
    return out;
  };
  const waitUp = async (names = backends.map((b) => b.name), timeoutMs = 30_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await states().catch(() => new Map<string, string>());
      if (names.every((n) => s.get(n) === "UP")) return;
      if (child.exitCode !== null) throw new Error(`haproxy exited: ${output}`);
      if (Date.now() > deadline) throw new Error(`haproxy servers not UP: ${JSON.stringify([...s])}\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  // Started once its admin socket answers.
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (
      await states().then(
        () => true,
        () => false,
      )
    )
      break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`haproxy did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    config,
    states,
    waitUp,
    output: () => output,
    stop: async () => {
      // SIGUSR1 is HAProxy's soft stop: it stops listening and ends once its connections are done; SIGTERM ends it at once.
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
