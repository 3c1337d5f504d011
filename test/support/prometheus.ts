/**
 * The real Prometheus (Debian's /usr/bin/prometheus) on a free loopback port, scraping one target every second with
 * a bearer token from a file (the scrape config docs/metrics.md shows), with its own TSDB in a temporary folder.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freeTcpPort } from "./syslogPeers.js";
import { until } from "./wait.js";

export interface PrometheusOptions {
  /** host:port of the service. */
  target: string;
  metricsPath: string;
  token: string;
  job?: string;
}

export interface RunningPrometheus {
  url: string;
  /** The value of the first series an instant query answers, or null when there is none. */
  query(expr: string): Promise<number | null>;
  /** The HTTP status of an instant query (400 for an expression Prometheus refuses). */
  queryStatus(expr: string): Promise<number>;
  log(): string;
  stop(): Promise<void>;
}

export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), "nms-prometheus-"));
  writeFileSync(join(dir, "token"), options.token, { mode: 0o600 });
  writeFileSync(
    join(dir, "prometheus.yml"),
    [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "scrape_configs:",
      `  - job_name: ${options.job ?? "nms"}`,
      `    metrics_path: ${options.metricsPath}`,
      "    authorization:",
      "      type: Bearer",
      `      credentials_file: ${join(dir, "token")}`,
      "    static_configs:",
      `      - targets: ["${options.target}"]`,
      "",
    ].join("\n"),
  );
  const port = await freeTcpPort();
  const url = `http://127.0.0.1:${port}`;
  const lines: string[] = [];
  const child = spawn(
    "/usr/bin/prometheus",
    [`--config.file=${join(dir, "prometheus.yml")}`, `--web.listen-address=127.0.0.1:${port}`, `--storage.tsdb.path=${join(dir, "data")}`, "--log.level=warn"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout!.on("data", (d: Buffer) => lines.push(d.toString()));
  child.stderr!.on("data", (d: Buffer) => lines.push(d.toString()));
  const log = () => lines.join("");
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until("Prometheus ready", async () => (await fetch(`${url}/-/ready`).catch(() => null))?.status === 200, 30_000, log);
  } catch (err) {
    await stop();
    throw err;
  }
  const instant = (expr: string) => fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
  return {
    url,
    log,
    stop,
    async query(expr) {
      const res = await instant(expr);
      const body = (await res.json()) as { status: string; data: { result: { value: [number, string] }[] } };
      if (body.status !== "success") throw new Error(`query ${expr}: ${JSON.stringify(body)}`);
      const first = body.data.result[0];
      return first ? Number(first.value[1]) : null;
    },
    async queryStatus(expr) {
      const res = await instant(expr);
      await res.arrayBuffer();
      return res.status;
    },
  };
}
