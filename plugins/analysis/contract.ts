/**
 * The analysis plugin's public contract: the extension point other plugins add tools to, and a tool's shape.
 * Contribute with `contributes: {"analysis.tools": [tool]}` and list "analysis" in dependsOn.
 */

/** The extension point other plugins add tools to: `contributes: {"analysis.tools": [tool]}`. */
export const TOOLS_POINT = "analysis.tools";

export type { AnalysisTool, FindingDraft, ToolRun, ToolNode, Severity, SubjectKind } from "./lib/tools/types.js";
