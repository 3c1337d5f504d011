import "@tsed/ajv";
import "@tsed/swagger";
import { createServer, type Server as HttpServer } from "node:http";
import { fileURLToPath } from "node:url";
import type { Type } from "@tsed/core";
import { Configuration, injector } from "@tsed/di";
import { PlatformExpress } from "@tsed/platform-express";
import type { PlatformBuilder } from "@tsed/platform-http";
import { getOperationsRoutes } from "@tsed/schema";
import express, { type NextFunction, type Request, type Response } from "express";
import { RULE } from "../auth/rules.js";
import type { Logger } from "../logging/Logger.js";
import { ApiError } from "../errors.js";
import type { Readiness } from "../config/KernelRuntime.js";
import { METRICS_PATH } from "../metrics/metricsEndpoint.js";
import { EnvelopeErrorFilter } from "./ErrorFilter.js";
// Replaces Ts.ED's response filter (for routes marked FastJson) before the platform is built.
import "./fastJson.js";
import { inputGuard } from "./inputGuard.js";
import { OpenApiController, OPENAPI_INFO, setOpenApiDocument } from "./OpenApiController.js";
import { buildOpenApiDocument, OpenApiConflict, routesMissingFrom } from "./openApiDocument.js";
import { kernelVersion } from "../paths.js";
import { routeTable } from "./routeTable.js";
import { staticAssetsMiddleware, type StaticAssetsDeclaration } from "./staticAssets.js";

@Configuration({})
class NmsHttpModule {}

export const API_PREFIX = "/api/v1";

/** The API docs page (Swagger UI): this project's template, which loads nothing from another origin (copied into dist/ by the build). */
const SWAGGER_VIEW = fileURLToPath(new URL("./swagger-ui.ejs", import.meta.url));

export interface HttpAppOptions {
  controllers: { owner: string; token: Type<unknown> }[];
  /** Instances the container holds as they are (`use`), or as another provider's instance (`alias`: a contract token). */
  providers: ({ token: unknown; use: unknown } | { token: unknown; alias: unknown })[];
  bodyLimit: string;
  /** Each plugin's id and description, for the OpenAPI document's tags (the kernel's own routes are tagged "core"). */
  tags?: [string, string][];
  /** Where the kernel is in its life; anything but `ready` answers 503 outside the health routes and /metrics. */
  readiness?: () => Readiness;
  /** Plugins' static files (manifest `staticAssets`), served outside /api/v1 before the API's routes. */
  staticAssets?: (StaticAssetsDeclaration & { owner: string })[];
  /** Routes with their own JSON body limit (e.g. the bundle import), parsed before the general one. */
  bodyLimits?: { path: string; limit: string }[];
  log: Logger;
  /** GET /metrics (answered before the API) and the request-duration histogram. */
  metrics?: {
    endpoint: (req: Request, res: Response, next: NextFunction) => void;
    observeRequest(method: string, route: string, status: number, seconds: number): void;
  };
}

/**
 * The route pattern a request matched (`/api/v1/nodes/:id`), a bounded metric label: "static" for what a plugin's
 * static files answered outside the API, "unmatched" for anything else no route took (404s).
 */
function routePattern(req: Request, status: number): string {
  const route = (req as Request & { route?: { path?: unknown } }).route;
  const path = req.originalUrl.split("?")[0]!;
  if (path === "/metrics") return "/metrics";
  if (route && typeof route.path === "string") return `${req.baseUrl}${route.path}`;
  return status < 400 && !path.startsWith(`${API_PREFIX}/`) ? "static" : "unmatched";
}

/**
 * Every route must say who may call it and what it answers: a route without an
 * access decorator or without a declared success response stops the boot, naming it
 * (so the generated OpenAPI document never omits either).
 */
export function checkAccessRules(controllers: HttpAppOptions["controllers"]): { method: string; path: string; protocolInput: boolean }[] {
  const routes: { method: string; path: string; protocolInput: boolean }[] = [];
  for (const { owner, token } of controllers) {
    for (const op of getOperationsRoutes(token, { basePath: API_PREFIX })) {
      if (!op.store.get(RULE.access)) {
        throw new Error(
          `plugin "${owner}": route ${op.method.toUpperCase()} ${op.fullPath} (${op.methodClassName}) has no access decorator (@Permission, @Authenticated or @Public)`,
        );
      }
      const statuses = [...op.operation.getResponses().keys()].map(String);
      if (!statuses.some((c) => /^2\d\d$/.test(c))) {
        throw new Error(
          `plugin "${owner}": route ${op.method.toUpperCase()} ${op.fullPath} (${op.methodClassName}) declares no success response (@Returns(2xx, Model))`,
        );
      }
      routes.push({ method: op.method, path: String(op.fullPath), protocolInput: op.store.get(RULE.protocolInput) === true });
    }
  }
  return routes;
}

/** A JSON body parser with its own limit for one path (the general parser then sees the body parsed already). */
function routeBodyParser({ path, limit }: { path: string; limit: string }) {
  const parse = express.json({ limit, strict: true, type: ["application/json", "application/*+json"] });
  return (req: Request, res: Response, next: NextFunction) => (req.originalUrl.split("?")[0] === path ? parse(req, res, next) : next());
}

/** The Ts.ED (Express) application: mounted controllers, JSON body parsing, the envelope filter, OpenAPI and Swagger UI. */
export class HttpApp {
  private platform?: PlatformBuilder;
  server?: HttpServer;

  constructor(private readonly options: HttpAppOptions) {}

  async build(): Promise<HttpServer> {
    const { controllers, providers, bodyLimit, log, metrics } = this.options;
    const all = [...controllers, { owner: "core", token: OpenApiController as Type<unknown> }];
    const routes = checkAccessRules(all);
    routeTable.reset(routes);
    const doc = buildOpenApiDocument({
      controllers: all,
      rootPath: API_PREFIX,
      info: { ...OPENAPI_INFO.info, "x-kernel-version": kernelVersion() },
      securitySchemes: OPENAPI_INFO.components.securitySchemes,
      tags: new Map([["core", CORE_TAG], ...(this.options.tags ?? [])]),
    });
    const missing = routesMissingFrom(doc, routes);
    if (missing.length) throw new OpenApiConflict(`routes missing from the OpenAPI document: ${missing.join(", ")}`);
    setOpenApiDocument(doc);
    const access = log.child("http");
    this.platform = await PlatformExpress.bootstrap(NmsHttpModule, {
      httpPort: false,
      httpsPort: false,
      logger: { level: "off", disableRoutesSummary: true, disableBootstrapLog: true },
      disableComponentsScan: true,
      mount: { [API_PREFIX]: all.map((c) => c.token) },
      imports: [...providers.map(containerImport), EnvelopeErrorFilter] as never,
      middlewares: [
        (req: Request, res: Response, next: NextFunction) => {
          const started = process.hrtime.bigint();
          res.on("finish", () => {
            const ms = Number((process.hrtime.bigint() - started) / 1000n) / 1000;
            access.info("request", {
              method: req.method,
              path: req.originalUrl.split("?")[0],
              status: res.statusCode,
              ms,
              request_id: res.getHeader("x-request-id"),
            });
            metrics?.observeRequest(req.method, routePattern(req, res.statusCode), res.statusCode, ms / 1000);
          });
          next();
        },
        ...(this.options.readiness ? [admission(this.options.readiness)] : []),
        ...(metrics ? [metrics.endpoint] : []),
        ...(this.options.bodyLimits ?? []).map(routeBodyParser),
        ...(this.options.staticAssets?.length ? [staticAssetsMiddleware(this.options.staticAssets)] : []),
        express.json({ limit: bodyLimit, strict: true, type: ["application/json", "application/*+json"] }),
        inputGuard(routes.filter((r) => r.protocolInput)),
      ],
      ajv: { returnsCoercedValues: true, allErrors: true, coerceTypes: false },
      swagger: [{ path: "/api/docs", specVersion: "3.0.3", spec: OPENAPI_INFO as never, viewPath: SWAGGER_VIEW }],
      jsonMapper: { additionalProperties: false, disableUnsecureConstructor: true },
    } as never);
    (this.platform.app.rawApp as unknown as { disable(setting: string): void }).disable("x-powered-by");
    await this.platform.listen(false);
    this.server = createServer(this.platform.callback());
    return this.server;
  }

  /**
   * Stops accepting connections and waits (up to `graceMs`) for requests in flight;
   * idle keep-alive connections are closed at once, stragglers after the grace.
   * Open WebSockets must be disconnected first, or they hold the server open.
   */
  async stopAccepting(graceMs = 10000): Promise<void> {
    const server = this.server;
    if (!server?.listening) return;
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    server.closeAllConnections();
  }

  /** An instance from the built container (plugins reach it through `ctx.get`, which applies the rules between plugins). */
  resolve<T>(token: unknown): T {
    if (!this.platform) throw new Error("services are not available before the kernel has built its container (use them from start on)");
    const found = injector().get<T>(token as never);
    if (found === undefined) throw new Error(`${(token as { name?: string }).name ?? String(token)} is not registered`);
    return found;
  }

  async close(): Promise<void> {
    await this.stopAccepting(0);
    await this.platform?.stop();
    this.platform = undefined;
  }
}

/** A provider entry as Ts.ED imports it: an alias resolves to the aliased provider's one instance, built on first use. */
function containerImport(p: HttpAppOptions["providers"][number]) {
  return "alias" in p ? { token: p.token, useFactory: () => injector().get(p.alias as never) } : p;
}

const CORE_TAG = "The kernel: sessions, accounts, API tokens, health and readiness, listeners, the configuration bundle, this document";

/** What still answers while the kernel is starting or stopping: the health routes (a balancer's probes) and /metrics. */
const OPEN_WHILE_NOT_READY = new Set([`${API_PREFIX}/health`, `${API_PREFIX}/health/live`, `${API_PREFIX}/health/ready`, METRICS_PATH]);

/**
 * Refuses requests until every boot phase is done and from the moment a stop begins: 503 with the envelope and
 * Retry-After, code `service_starting` or `service_stopping`. A handler never runs against plugins or jobs not yet
 * started or already stopped (which used to answer 500 and could leave half-made rows).
 */
function admission(readiness: () => Readiness) {
  return (req: Request, res: Response, next: NextFunction) => {
    const phase = readiness();
    if (phase === "ready" || OPEN_WHILE_NOT_READY.has(req.path.replace(/\/+$/, "") || "/")) return next();
    const starting = phase === "starting";
    res.status(503).set("Retry-After", "1");
    res.json(
      new ApiError(
        503,
        starting ? "service_starting" : "service_stopping",
        starting ? "The service is starting; try again in a moment." : "This replica is stopping; send the request to another, or try again shortly.",
      ).toEnvelope(),
    );
  };
}
