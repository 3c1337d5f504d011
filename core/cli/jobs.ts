/**
 * `nms sweep` and `nms report run`: work a running service does as a job, started through its REST API and followed
 * until it ends (a progress bar on a terminal). The routes are the polling and reports plugins'; the CLI only calls them.
 */
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { CliUsageError, serviceUrl, sleep, withApi, type ConnectionOptions } from "./connection.js";
import { progressBar, reportProgress, sweepProgress } from "./progress.js";

interface ApiFlags {
  url?: string;
  token?: string;
  username?: string;
  password?: string;
  json?: boolean;
  intervalMs?: string;
}

function connection(o: ApiFlags): { url: string; options: ConnectionOptions } {
  const options: ConnectionOptions = { url: o.url, token: o.token, username: o.username, password: o.password };
  const url = serviceUrl(options);
  if (!url) throw new CliUsageError("this command works through a running service: give its URL with --url (or NMS_URL)");
  return { url, options };
}

function apiOptions(cmd: Command): Command {
  return cmd
    .option("--url <url>", "the running service's base URL (or NMS_URL)")
    .option("--token <token>", "a session or API token (or NMS_TOKEN)")
    .option("--username <name>", "log in as this account instead of a token")
    .option("--password <password>", "the password for --username")
    .option("--interval-ms <ms>", "how often to ask how far the job is", "500")
    .option("--json", "print the full result as JSON only");
}

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new CliUsageError(`${name}: "${value}" is not a positive integer`);
  return Number(value);
}

interface Sweep {
  id: string;
  cidr: string;
  status: string;
  total: number;
  probed: number;
  found: number;
  error: string | null;
  results: { address: string; sys_name: string | null; vendor: string | null; model: string | null; sys_object_id: string | null }[];
}

interface Run {
  id: string;
  definition_name: string;
  status: string;
  error: string | null;
  outputs: { format: string; bytes: number }[];
}

const FORMATS = ["html", "csv", "pdf"] as const;

/** The output format: --format, else the --out file's extension when it names one, else PDF. */
export function reportFormat(format: string | undefined, out: string | undefined): (typeof FORMATS)[number] {
  if (format !== undefined) {
    if (!(FORMATS as readonly string[]).includes(format))
      throw new CliUsageError(`--format must be one of ${FORMATS.join(", ")}; "${format}" is not one of them`);
    return format as (typeof FORMATS)[number];
  }
  const ext = /\.([a-z]+)$/i.exec(out ?? "")?.[1]?.toLowerCase();
  return (FORMATS as readonly string[]).includes(ext ?? "") ? (ext as (typeof FORMATS)[number]) : "pdf";
}

export function registerJobCommands(program: Command): void {
  apiOptions(
    program
      .command("sweep")
      .description("discover SNMP devices in an address range through the service (POST /discovery/sweeps) and wait for the result")
      .argument("<cidr>", "address range, e.g. 192.0.2.0/24")
      .option("--credential <id...>", "inventory credential ids (snmp_v2c or snmp_v3) to try, in order (1 to 8)")
      .option("--pool <pool>", "the poller pool whose network the range is in")
      .option("--port <port>", "UDP port of the agents (default 161)")
      .option("--timeout-ms <ms>", "how long each probe waits (default 1000)"),
  ).action(async (cidr: string, o: ApiFlags & { credential?: string[]; pool?: string; port?: string; timeoutMs?: string }) => {
    if (!o.credential?.length) throw new CliUsageError("--credential is required: at least one inventory credential id");
    const body = {
      cidr,
      credential_ids: o.credential,
      ...(o.pool ? { pool: o.pool } : {}),
      ...(o.port ? { port: positiveInt(o.port, "--port") } : {}),
      ...(o.timeoutMs ? { timeout_ms: positiveInt(o.timeoutMs, "--timeout-ms") } : {}),
    };
    const interval = positiveInt(o.intervalMs, "--interval-ms")!;
    const { url, options } = connection(o);
    const sweep = await withApi(url, options, async (api) => {
      const { id } = await api.json<{ id: string }>("POST", "/discovery/sweeps", body);
      const bar = progressBar(`sweep ${cidr}`);
      try {
        for (;;) {
          const s = await api.json<Sweep>("GET", `/discovery/sweeps/${id}`);
          const p = sweepProgress(s);
          bar.update(p.value, p.total, `${s.found} found`);
          if (s.status === "done" || s.status === "failed") return s;
          await sleep(interval);
        }
      } finally {
        bar.stop();
      }
    });
    if (o.json) process.stdout.write(JSON.stringify(sweep, null, 2) + "\n");
    if (sweep.status === "failed") {
      process.stderr.write(`nms sweep: sweep ${sweep.id} failed: ${sweep.error ?? "no reason given"}\n`);
      process.exitCode = 1;
      return;
    }
    if (o.json) return;
    process.stdout.write(`sweep ${sweep.id} of ${sweep.cidr} done: ${sweep.probed} addresses probed, ${sweep.found} answered\n`);
    for (const r of sweep.results)
      process.stdout.write(`${r.address}  ${r.sys_name ?? "-"}  ${[r.vendor, r.model].filter(Boolean).join(" ") || (r.sys_object_id ?? "-")}\n`);
  });

  const report = program.command("report").description("render reports through the service");
  apiOptions(
    report
      .command("run")
      .description("render a report definition now (POST /reports/definitions/{id}/run), wait for it and download the output")
      .argument("<definition-id>", "the report definition's id")
      .option("--out <file>", 'write the rendered report to this file ("-" = stdout); without it only the run is summarized')
      .option("--format <format>", "html, csv or pdf (default: the --out file's extension, else pdf)")
      .option("--range-days <days>", "override the definition's range_days"),
  ).action(async (definitionId: string, o: ApiFlags & { out?: string; format?: string; rangeDays?: string }) => {
    const format = reportFormat(o.format, o.out);
    const rangeDays = positiveInt(o.rangeDays, "--range-days");
    const interval = positiveInt(o.intervalMs, "--interval-ms")!;
    const { url, options } = connection(o);
    const result = await withApi(url, options, async (api) => {
      const { id } = await api.json<{ id: string }>(
        "POST",
        `/reports/definitions/${encodeURIComponent(definitionId)}/run`,
        rangeDays ? { range_days: rangeDays } : {},
      );
      const bar = progressBar("report");
      let run: Run;
      try {
        for (;;) {
          run = await api.json<Run>("GET", `/reports/runs/${id}`);
          const p = reportProgress(run.status);
          bar.update(p.value, p.total, run.status);
          if (run.status === "succeeded" || run.status === "failed") break;
          await sleep(interval);
        }
      } finally {
        bar.stop();
      }
      if (run.status !== "succeeded" || !o.out) return { run, content: null };
      const content = Buffer.from(await (await api.request("GET", `/reports/runs/${id}/${format}`)).arrayBuffer());
      return { run, content };
    });
    const { run, content } = result;
    if (run.status === "failed") {
      if (o.json) process.stdout.write(JSON.stringify(run, null, 2) + "\n");
      process.stderr.write(`nms report run: run ${run.id} failed: ${run.error ?? "no reason given"}\n`);
      process.exitCode = 1;
      return;
    }
    if (content && o.out === "-") {
      process.stdout.write(content);
      return;
    }
    if (content && o.out) writeFileSync(o.out, content);
    if (o.json) {
      process.stdout.write(JSON.stringify({ ...run, ...(content ? { written: { file: o.out, format, bytes: content.length } } : {}) }, null, 2) + "\n");
      return;
    }
    process.stdout.write(`report run ${run.id} (${run.definition_name}) succeeded: ${run.outputs.map((x) => `${x.format} ${x.bytes} bytes`).join(", ")}\n`);
    if (content) process.stdout.write(`wrote ${format.toUpperCase()} (${content.length} bytes) to ${o.out}\n`);
  });
}
