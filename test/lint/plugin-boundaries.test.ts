import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";

const root = fileURLToPath(new URL("../../", import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The messages ESLint (with the project's own config) reports for this text, as if it were the file at `path`. */
async function lint(path: string, code: string): Promise<{ ruleId: string | null; message: string }[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}${path}` });
  return result.messages.map(({ ruleId, message }) => ({ ruleId, message }));
}

describe("the rules between plugins, in ESLint", () => {
  it("refuses an import of another plugin's internals", async () => {
    const messages = await lint(
      "plugins/polling/services/Probe.ts",
      'import { ClassifierService } from "../../inventory/services/ClassifierService.js";\nexport const probe = ClassifierService;\n',
    );
    expect(messages).toEqual([
      {
        ruleId: "nms/plugin-boundaries",
        message:
          'plugin "polling" imports "../../inventory/services/ClassifierService.js", inside plugin "inventory": import from "inventory"\'s contract.ts instead (and list "inventory" in dependsOn)',
      },
    ]);
  });

  it("refuses re-exports and another plugin's index outside tests", async () => {
    const messages = await lint("plugins/alerts/lib/x.ts", 'export { METRICS } from "../../polling/index.js";\nexport * from "../../polling/lib/rates.js";\n');
    expect(messages.map((m) => m.ruleId)).toEqual(["nms/plugin-boundaries", "nms/plugin-boundaries"]);
  });

  it("lets a plugin import another's contract, its own files, and core", async () => {
    const messages = await lint(
      "plugins/alerts/services/Probe.ts",
      [
        'import { RAW_COUNTER_METRICS } from "../../polling/contract.js";',
        'import { ALERTS_CONTEXT } from "../context.js";',
        'import { badRequest } from "../../../core/index.js";',
        "export const all = [RAW_COUNTER_METRICS, ALERTS_CONTEXT, badRequest];",
        "",
      ].join("\n"),
    );
    expect(messages).toEqual([]);
  });

  it("refuses a contract import of a plugin the manifest does not list in dependsOn or optionalDependsOn", async () => {
    const messages = await lint("plugins/ipam/services/Probe.ts", 'import type { Severity } from "../../alerts/contract.js";\nexport type S = Severity;\n');
    expect(messages).toEqual([
      {
        ruleId: "nms/plugin-boundaries",
        message: 'plugin "ipam" imports "../../alerts/contract.js" of plugin "alerts", which its manifest lists in neither dependsOn nor optionalDependsOn',
      },
    ]);
    expect(await lint("plugins/ipam/services/Probe.ts", 'import type { NodeEvent } from "../../inventory/contract.js";\nexport type N = NodeEvent;\n')).toEqual(
      [],
    );
  });

  it("lets a plugin's tests import another plugin's index, for its manifest", async () => {
    const messages = await lint(
      "plugins/alerts/test/probe.test.ts",
      'import { pollingPlugin } from "../../polling/index.js";\nexport const p = pollingPlugin;\n',
    );
    expect(messages).toEqual([]);
  });

  it("refuses Ts.ED's global container in plugins", async () => {
    const messages = await lint("plugins/alerts/services/Probe.ts", 'import { injector, inject } from "@tsed/di";\nexport const all = [injector, inject];\n');
    expect(messages.map((m) => m.ruleId)).toEqual(["no-restricted-imports", "no-restricted-imports"]);
  });
});
