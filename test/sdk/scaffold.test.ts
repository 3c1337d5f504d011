import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/spawnKernel.js";

const CLI = join(ROOT, "dist/core/cli/main.js");

function nms(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME } });
}

describe("nms plugin new", () => {
  const tmp = mkdtempSync(join(tmpdir(), "nms-scaffold-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("writes a plugin package that builds, and whose tests pass against this checkout", () => {
    const dir = join(tmp, "demo");
    const made = nms(["plugin", "new", "demo-notes", "--dir", dir]);
    expect(made.stderr).toBe("");
    expect(made.status).toBe(0);
    expect(made.stdout).toBe(`wrote plugin "demo-notes" to ${dir}\nnext: cd ${dir} && npm install && npm test\n`);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(pkg.devDependencies["nms-core"]).toBe(`file:${ROOT.replace(/\/$/, "")}`);

    // What `npm install` would link, without the registry: nms-core is this checkout; TypeScript and Node's types are its own.
    mkdirSync(join(dir, "node_modules/@types"), { recursive: true });
    symlinkSync(ROOT, join(dir, "node_modules/nms-core"));
    for (const m of ["typescript", "@types/node", "undici-types"]) symlinkSync(join(ROOT, "node_modules", m), join(dir, "node_modules", m));

    const build = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: dir, encoding: "utf8" });
    expect(build.stdout + build.stderr).toBe("");
    expect(build.status).toBe(0);
    expect(spawnSync(process.execPath, ["scripts/copy-migrations.mjs"], { cwd: dir }).status).toBe(0);

    const test = spawnSync(process.execPath, ["--test", "--test-reporter=tap", "dist/test/**/*.test.js"], {
      cwd: dir,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NMS_TEST_ADMIN_DATABASE_URL: process.env.NMS_TEST_ADMIN_DATABASE_URL },
      timeout: 120000,
    });
    expect(test.stdout).toMatch(/# pass 4\n# fail 0/);
    expect(test.stdout).toContain("ok 3 - lets a plugin that depends on it add notes through its contract");
    expect(test.status).toBe(0);
  }, 180000);

  it("refuses a bad id and a folder that exists, in one line", () => {
    const bad = nms(["plugin", "new", "Bad_Id", "--dir", join(tmp, "x")]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe('nms: plugin id "Bad_Id" must be kebab-case (a-z, 0-9, dashes), at most 40 characters\n');
    const taken = nms(["plugin", "new", "demo-notes", "--dir", tmp]);
    expect(taken.status).toBe(2);
    expect(taken.stderr).toBe(`nms: ${tmp} already exists\n`);
  });
});
