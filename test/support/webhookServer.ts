import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: unknown;
  at: number;
}

/** How the next request is answered: a status (with Retry-After), after a delay, or by dropping the connection. */
export interface Answer {
  status?: number;
  retryAfter?: string;
  delayMs?: number;
  drop?: boolean;
}

export interface WebhookServer {
  url: string;
  received: ReceivedRequest[];
  /** Answers for the next requests, in order; when none is queued, `otherwise` (default 200). */
  queue(...answers: Answer[]): void;
  otherwise: Answer;
  close(): Promise<void>;
}

/** A webhook receiver on loopback (free port) that records every request and answers as told. */
export async function startWebhookServer(): Promise<WebhookServer> {
  const received: ReceivedRequest[] = [];
  const answers: Answer[] = [];
  const state: { otherwise: Answer } = { otherwise: { status: 200 } };
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => {
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // not JSON: keep the text
      }
      received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, raw, body, at: Date.now() });
      const a = answers.shift() ?? state.otherwise;
      const reply = () => {
        if (a.drop) return req.socket.destroy();
        if (a.retryAfter) res.setHeader("retry-after", a.retryAfter);
        res.statusCode = a.status ?? 200;
        res.end();
      };
      if (a.delayMs) setTimeout(reply, a.delayMs);
      else reply();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    queue: (...a) => void answers.push(...a),
    get otherwise() {
      return state.otherwise;
    },
    set otherwise(a: Answer) {
      state.otherwise = a;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
