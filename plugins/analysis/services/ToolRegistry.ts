import { Inject, Injectable } from "@tsed/di";
import { Ajv, type ValidateFunction } from "ajv";
import { ApiError, badRequest } from "../../../core/index.js";
import { TOOLS_POINT } from "../contract.js";
import { ANALYSIS_CONTEXT, type AnalysisContext } from "../context.js";
import { BUILTIN_TOOLS } from "../lib/tools/index.js";
import type { AnalysisTool } from "../lib/tools/types.js";

/** The registry of analysis tools (built-in and contributed), each with its params schema compiled by ajv. */
@Injectable()
export class ToolRegistry {
  @Inject(ANALYSIS_CONTEXT)
  private ctx: AnalysisContext;

  private compiled: Map<string, { tool: AnalysisTool; validate: ValidateFunction }> | null = null;

  private registry() {
    if (!this.compiled) {
      const ajv = new Ajv({ useDefaults: true, allErrors: false, strict: false });
      const contributed = this.ctx.extensions.get(TOOLS_POINT) as readonly AnalysisTool[];
      this.compiled = new Map([...BUILTIN_TOOLS, ...contributed].map((tool) => [tool.name, { tool, validate: ajv.compile(tool.paramsSchema) }]));
    }
    return this.compiled;
  }

  list(): AnalysisTool[] {
    return [...this.registry().values()].map((e) => e.tool);
  }

  names(): string[] {
    return [...this.registry().keys()];
  }

  get(name: string): AnalysisTool | undefined {
    return this.registry().get(name)?.tool;
  }

  /** The params with the tool's defaults filled in; 400 unknown_tool or invalid_params, 413 document_too_large. */
  check(toolName: string, params: unknown): { tool: AnalysisTool; params: Record<string, unknown> } {
    const entry = this.registry().get(toolName);
    if (!entry) throw badRequest("unknown_tool", `tool must be one of ${this.names().join(", ")}.`);
    return { tool: entry.tool, params: this.checkParams(entry.tool.name, params ?? {}) };
  }

  /** Whether params fit a tool (for the bundle import, which skips rather than refuses). */
  fits(toolName: string, params: unknown): boolean {
    try {
      this.check(toolName, params);
      return true;
    } catch {
      return false;
    }
  }

  private checkParams(toolName: string, params: unknown): Record<string, unknown> {
    const max = this.ctx.kernelConfig.limits.jsonDocumentMaxBytes;
    const text = JSON.stringify(params);
    if (Buffer.byteLength(text, "utf8") > max) throw new ApiError(413, "document_too_large", `params are larger than the ${max}-byte JSON-document limit.`);
    if (params === null || typeof params !== "object" || Array.isArray(params)) throw badRequest("invalid_params", "params must be an object.");
    const copy = JSON.parse(text) as Record<string, unknown>;
    const { validate } = this.registry().get(toolName)!;
    if (!validate(copy)) {
      const e = validate.errors?.[0];
      const where = e?.instancePath ? `params${e.instancePath.replace(/\//g, ".")}` : "params";
      const what =
        e?.keyword === "additionalProperties"
          ? `has an unknown key ${JSON.stringify((e.params as { additionalProperty: string }).additionalProperty.slice(0, 64))}`
          : e?.message;
      throw badRequest("invalid_params", `${where} ${what ?? "is invalid"} (GET /analysis/tools lists the schema of ${toolName}).`);
    }
    return copy;
  }
}
