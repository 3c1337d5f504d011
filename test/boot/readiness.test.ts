/**
 * Readiness, as a balancer sees it: a real service process with every built-in plugin, asked from the first moment its
 * port accepts until it is ready, and again while it stops on SIGTERM. Before ready and from the stop on, the API answers
 * 503 with the envelope (service_starting / service_stopping); the health routes tell liveness from readiness; no
 * request is ever answered 500, including the routes that once did (a report run, an analysis job, a discovery sweep).
 */
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { rmSync } from "node:fs";
import { freeTcpPort } from "../support/syslogPeers.js";
import { spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";

const TOKEN = "readiness-bootstrap-token-0123456789abcdef";

interface Answer {
  route: string;
  status: number | "refused";
  code: string | null;
  /** Whether the kernel had printed its ready line when the answer came. */
  afterReady: boolean;
}

/** The routes asked in a loop: the health routes, and writes whose handlers need started plugins and jobs. */
function requests(base: string): { route: string; init: RequestInit; url: string }[] {
  const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  return [
    { route: "GET /health", url: `${base}/api/v1/health`, init: {} },
    { route: "GET /health/live", url: `${base}/api/v1/health/live`, init: {} },
    { route: "GET /health/ready", url: `${base}/api/v1/health/ready`, init: {} },
    { route: "GET /nodes", url: `${base}/api/v1/nodes?limit=1`, init: { headers: auth } },
    { route: "POST /reports/definitions/{id}/run", url: `${base}/api/v1/reports/definitions/${randomUUID()}/run`, init: { method: "POST", headers: auth } },
    {
      route: "POST /analysis/jobs",
      url: `${base}/api/v1/analysis/jobs`,
      init: { method: "POST", headers: auth, body: JSON.stringify({ tool: "silent_nodes", scope_kind: "all" }) },
    },
    {
      route: "POST /discovery/sweeps",
      url: `${base}/api/v1/discovery/sweeps`,
      init: { method: "POST", headers: auth, body: JSON.stringify({ cidr: "127.0.0.1/32", credential_ids: [] }) },
    },
  ];
}

/** Asks every route in turn until `until()` says stop, recording each answer. */
async function hammer(base: string, answers: Answer[], isReady: () => boolean, until: () => boolean): Promise<void> {
  while (!until()) {
    for (const r of requests(base)) {
      const afterReady = isReady();
      try {
        const res = await fetch(r.url, { ...r.init, signal: AbortSignal.timeout(10000) });
        const text = await res.text();
        let code: string | null = null;
        try {
          code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? null;
        } catch {
          code = null;
        }
        answers.push({ route: r.route, status: res.status, code, afterReady });
      } catch {
        answers.push({ route: r.route, status: "refused", code: null, afterReady });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  }
}

/** Resolves once a TCP connection to the port succeeds. */
async function accepting(port: number, deadline: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1", () => {
        s.destroy();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`port ${port} never accepted`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const problems = (answers: Answer[]) => answers.filter((a) => a.status === 500 || (typeof a.status === "number" && a.status > 500 && a.status !== 503));

describe("readiness", () => {
  let k: SpawnedKernel | undefined;
  afterAll(async () => {
    await k?.stop("SIGKILL");
    if (k) rmSync(k.dataDir, { recursive: true, force: true });
  });

  it("answers 503 before ready and while stopping, never 500, and tells liveness from readiness", async () => {
    const port = await freeTcpPort();
    const base = `http://127.0.0.1:${port}`;
    const starting: Answer[] = [];
    let ready = false;
    let stop = false;
    const booting = spawnKernel({ env: { NMS_PORT: String(port), NMS_BUILTIN_PLUGINS: "true", NMS_BOOTSTRAP_TOKEN: TOKEN }, timeoutMs: 60000 });
    await accepting(port, Date.now() + 60000);
    const asking = hammer(
      base,
      starting,
      () => ready,
      () => stop,
    );
    k = await booting;
    ready = true;
    // A few rounds after the ready line, so each route has answered normally too.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    stop = true;
    await asking;

    expect(problems(starting)).toEqual([]);
    // The window is real: API requests were refused as starting before the ready line (a request sent just before the
    // line is printed may already be served: the kernel turns ready, then prints).
    const before = starting.filter((a) => !a.afterReady && a.status !== "refused");
    const api = (a: Answer) => !a.route.startsWith("GET /health");
    expect(before.filter((a) => api(a) && a.code === "service_starting").length).toBeGreaterThan(0);
    expect(before.filter((a) => a.route === "GET /health/ready" && a.status === 503).length).toBeGreaterThan(0);
    expect(before.filter((a) => a.route === "GET /health/live").map((a) => a.status)).toEqual(
      before.filter((a) => a.route === "GET /health/live").map(() => 200),
    );
    expect(starting.filter((a) => a.status === 503 && api(a) && a.code !== "service_starting")).toEqual([]);
    // Once ready, every route answers as it does on a running service (none says it is starting).
    const after = starting.filter((a) => a.afterReady && a.status !== "refused");
    expect(new Set(after.map((a) => a.route)).size).toBe(requests(base).length);
    expect(after.filter((a) => a.code === "service_starting")).toEqual([]);
    expect(after.filter((a) => a.route === "GET /health/ready").at(-1)?.status).toBe(200);

    const health = (await (await fetch(`${base}/api/v1/health`)).json()) as { status: string; ready: boolean };
    expect(health).toMatchObject({ status: "ok", ready: true });
    expect(await (await fetch(`${base}/api/v1/health/live`)).json()).toMatchObject({ status: "alive", phase: "ready" });

    // A graceful stop with requests arriving: each is answered normally or 503 service_stopping, or refused once the port closes.
    const stopping: Answer[] = [];
    let exited = false;
    const asked = hammer(
      base,
      stopping,
      () => true,
      () => exited,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const code = await k.stop("SIGTERM");
    exited = true;
    await asked;
    expect(code).toBe(0);
    expect(problems(stopping)).toEqual([]);
    expect(stopping.filter((a) => a.status === 503 && api(a) && a.code !== "service_stopping")).toEqual([]);
  }, 120000);
});
