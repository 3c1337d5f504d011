/**
 * The analysis plugin's public contract: the extension point other plugins add tools to, and a tool's shape.
 * Contribute with `contributes: {"analysis.tools": [tool]}` and list "analysis" in dependsOn.
 */
export { TOOLS_POINT } from "./services/ToolRegistry.js";
export type { AnalysisTool, FindingDraft, ToolRun, ToolNode, Severity, SubjectKind } from "./lib/tools/types.js";
