/**
 * The typed client as an integrator gets it: `npm pack` of clients/typescript (its prepare script builds dist/), the
 * tarball installed into a scratch project outside the repository, a script written against the package compiled with
 * TypeScript's strict checks and run against a live service: log in, list alerts, page through nodes, create a report
 * schedule (whose body type once merged with the analysis plugin's and refused valid bodies).
 */
import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { eventsPlugin } from "../../plugins/events/index.js";
import { flowsPlugin } from "../../plugins/flows/index.js";
import { notificationsPlugin } from "../../plugins/notifications/index.js";
import { reportsPlugin } from "../../plugins/reports/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { ROOT } from "../support/spawnKernel.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

const scratch = mkdtempSync(join(tmpdir(), "nms-client-consumer-"));
let k: TestKernel;

/** Runs a command, failing the test with its output when it exits non-zero. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  const res = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "", ...env }, timeout: 180_000 });
  if (res.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${res.status}\n${res.stdout}\n${res.stderr}`);
  return res.stdout;
}

const SCRIPT = `import { createClient, login, paginate, unwrap, type Schemas } from "@nms/client";

declare const process: { env: Record<string, string | undefined> };

let token: string | null = null;
const api = createClient({ baseUrl: process.env.NMS_URL!, token: () => token });
token = (await login(api, process.env.NMS_USER!, process.env.NMS_PASSWORD!)).token;

const alerts: Schemas["ActiveAlertView"][] = await unwrap(api.GET("/api/v1/alerts"));
const names: string[] = [];
for await (const node of paginate(api, "/api/v1/nodes", { query: { limit: 2 } })) names.push(node.name);

// A report schedule: its body type is the reports plugin's own (ReportScheduleBody), not a merge with analysis's.
const definition = await unwrap(
  api.POST("/api/v1/reports/definitions", { body: { name: "daily availability", spec: { sections: [{ kind: "availability", group_by: "node" }], range_days: 1 } } }),
);
const schedule: Schemas["ReportScheduleBody"] = { definition_id: definition.id, frequency: "daily", at_hour: 6, at_minute: 30 };
const created = await unwrap(api.POST("/api/v1/reports/schedules", { body: schedule }));
const listed = await unwrap(api.GET("/api/v1/reports/schedules/{id}", { params: { path: { id: created.id } } }));
console.log(JSON.stringify({ alerts: alerts.length, names, schedule: [listed.definition_id === definition.id, listed.frequency] }));
`;

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, notificationsPlugin, reportsPlugin] });
  await k.kernel.auth.createAccount({ username: "integrator", password: "integrator-password-1", role: "admin", scope: "All" });
  for (const name of ["edge-1", "edge-2", "edge-3", "edge-4", "edge-5"]) {
    expect((await k.request("POST", "/nodes", { body: { name, address: `10.77.0.${name.slice(-1)}` } })).status).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  await k?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

it("packs, installs outside the repository, compiles a script against it and runs it against a live service", async () => {
  run("npm", ["pack", "--pack-destination", scratch, "--loglevel=error"], join(ROOT, "clients", "typescript"));
  const tarball = readdirSync(scratch).find((f) => f.endsWith(".tgz"))!;
  expect(tarball).toMatch(/^nms-client-\d+\.\d+\.\d+\.tgz$/);
  const listed = run("tar", ["-tzf", tarball], scratch).split("\n");
  expect(listed).toEqual(expect.arrayContaining(["package/dist/index.js", "package/dist/index.d.ts", "package/dist/rest.d.ts", "package/dist/schema.d.ts"]));
  expect(listed.filter((f) => f.startsWith("package/src/"))).toEqual([]);

  const project = join(scratch, "consumer");
  run("mkdir", ["-p", project], scratch);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2023", "DOM"],
        types: [],
        strict: true,
        skipLibCheck: false,
      },
    }),
  );
  writeFileSync(join(project, "script.ts"), SCRIPT);
  run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", join(scratch, tarball)], project);

  run(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], project);
  // Asynchronously: the service answers from this process's event loop.
  const { stdout: out } = await promisify(execFile)(process.execPath, ["script.js"], {
    cwd: project,
    env: { PATH: process.env.PATH, NMS_URL: k.url, NMS_USER: "integrator", NMS_PASSWORD: "integrator-password-1" },
    timeout: 60_000,
  });
  expect(JSON.parse(out)).toEqual({ alerts: 0, names: ["edge-1", "edge-2", "edge-3", "edge-4", "edge-5"], schedule: [true, "daily"] });
}, 240_000);
