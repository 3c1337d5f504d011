export interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
  security?: unknown[];
}

/** Every operation must list a 2xx and a 500, secured ones a 401, and every 4xx/5xx must be the error envelope. */
export function responseProblems(spec: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } }): string[] {
  const problems: string[] = [];
  if (!spec.components.schemas.ErrorEnvelope) problems.push("no ErrorEnvelope schema");
  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const codes = Object.keys(op.responses);
      const where = `${method.toUpperCase()} ${path}`;
      if (!codes.some((c) => /^2\d\d$/.test(c))) problems.push(`${where}: no success response`);
      if (!codes.includes("500")) problems.push(`${where}: no 500`);
      if (op.security && !codes.includes("401")) problems.push(`${where}: secured without 401`);
      for (const c of codes.filter((c) => /^[45]\d\d$/.test(c) && !((path === "/api/v1/health" || path === "/api/v1/health/ready") && c === "503"))) {
        const ref = op.responses[c].content?.["application/json"]?.schema?.$ref;
        if (ref !== "#/components/schemas/ErrorEnvelope") problems.push(`${where}: ${c} is not the envelope`);
      }
    }
  }
  return problems;
}
