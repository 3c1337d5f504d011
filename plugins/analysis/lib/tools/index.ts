import { capacityForecast } from "./capacityForecast.js";
import { errorHotspots } from "./errorHotspots.js";
import { flapping } from "./flapping.js";
import { silentNodes } from "./silentNodes.js";
import { subnetUtilisation } from "./subnetUtilisation.js";
import type { AnalysisTool } from "./types.js";

/** The tools this plugin ships; other plugins add theirs through the extension point analysis.tools. */
export const BUILTIN_TOOLS: readonly AnalysisTool[] = [capacityForecast, errorHotspots, flapping, silentNodes, subnetUtilisation];

const NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** The extension point's check of a contributed tool. */
export function validateTool(item: unknown): void {
  const t = item as Partial<AnalysisTool> | null;
  if (!t || typeof t !== "object") throw new Error("an analysis tool is an object");
  if (typeof t.name !== "string" || !NAME.test(t.name)) throw new Error("an analysis tool needs a snake_case name");
  if (typeof t.title !== "string" || typeof t.description !== "string") throw new Error(`analysis tool "${t.name}" needs a title and a description`);
  if (!t.paramsSchema || typeof t.paramsSchema !== "object" || (t.paramsSchema as { type?: unknown }).type !== "object") {
    throw new Error(`analysis tool "${t.name}" needs a params schema of type object`);
  }
  if (typeof t.run !== "function") throw new Error(`analysis tool "${t.name}" needs a run function`);
  if (BUILTIN_TOOLS.some((b) => b.name === t.name)) throw new Error(`analysis tool "${t.name}" is built in`);
}
