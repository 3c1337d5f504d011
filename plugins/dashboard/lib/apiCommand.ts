import { createClient, isErrorEnvelope } from "../../../clients/typescript/src/rest.js";
import type { CommandDeclaration } from "../../../core/index.js";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type Method = (typeof METHODS)[number];

export const API_USAGE = `usage: nms api <METHOD> <route> [json]

Calls the service's REST API with the typed client and prints the JSON answer.
  METHOD   GET, POST, PUT, PATCH or DELETE
  route    /alerts, /nodes/<id>, /alerts/history?limit=5 ... (the /api/v1 prefix is optional)
  json     the request body (or - to read it from stdin)

Environment: NMS_URL (default http://<host>:<port> of the configuration), NMS_TOKEN (a session or API token; without
it only public reads answer). Exit 0 on a 2xx, 1 on an error answer (the envelope goes to stderr), 2 on bad usage.`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** `nms api <METHOD> <route> [json]`: one call through the typed client; the answer's JSON on stdout. */
export const apiCommand: CommandDeclaration = {
  description: "call the REST API: nms api <METHOD> <route> [json] (NMS_URL, NMS_TOKEN)",
  async run(argv, env) {
    if (argv.includes("--help") || argv.includes("-h")) {
      process.stdout.write(`${API_USAGE}\n`);
      return 0;
    }
    const [rawMethod, rawRoute, rawBody] = argv;
    const method = rawMethod?.toUpperCase() as Method | undefined;
    const mistake =
      method === undefined
        ? "a method and a route are required"
        : !METHODS.includes(method)
          ? `"${rawMethod}" is not a method: use ${METHODS.join(", ")}`
          : !rawRoute
            ? "a route is required, e.g. /nodes"
            : argv.length > 3
              ? `one body at most; "${argv[3]}" is one argument too many (quote the JSON)`
              : null;
    if (mistake !== null || method === undefined || rawRoute === undefined) {
      process.stderr.write(`nms api: ${mistake}\n\n${API_USAGE}\n`);
      return 2;
    }
    let body: unknown;
    if (rawBody !== undefined) {
      try {
        body = JSON.parse(rawBody === "-" ? await readStdin() : rawBody);
      } catch {
        process.stderr.write("nms api: the body is not valid JSON\n");
        return 2;
      }
    }
    const route = rawRoute.startsWith("/api/") ? rawRoute : `/api/v1${rawRoute.startsWith("/") ? "" : "/"}${rawRoute}`;
    const host = env.config.host === "0.0.0.0" || env.config.host === "::" ? "127.0.0.1" : env.config.host;
    const baseUrl = process.env.NMS_URL ?? `http://${host.includes(":") ? `[${host}]` : host}:${env.config.port}`;
    const client = createClient({ baseUrl, token: process.env.NMS_TOKEN ?? null });
    // The route comes from the command line, so the generic request(): typed per route only when written in code.
    const request = client.request as unknown as (m: string, p: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    let answer: { data?: unknown; error?: unknown; response: Response };
    try {
      answer = await request(method, route, body === undefined ? {} : { body });
    } catch (err) {
      process.stderr.write(`nms api: ${baseUrl} could not be reached (${(err as Error).message})\n`);
      return 1;
    }
    const { data, error, response } = answer;
    if (!response.ok) {
      const envelope = isErrorEnvelope(error) ? error : { error: { code: `http_${response.status}`, message: `The service answered ${response.status}.` } };
      process.stderr.write(`${response.status} ${JSON.stringify(envelope)}\n`);
      return 1;
    }
    const next = response.headers.get("x-next-cursor");
    if (next) process.stderr.write(`next page: cursor=${next}\n`);
    if (data !== undefined) process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
    return 0;
  },
};
