import { Controller } from "@tsed/di";
import { Get, generateSpec, Returns, Summary } from "@tsed/schema";
import { Public, WithoutStore } from "../auth/decorators.js";
import { kernelVersion } from "../paths.js";

export const OPENAPI_INFO = {
  info: {
    title: "nms-core northbound API",
    version: "0.2.1",
    description: "REST contract of the network-monitoring core. Every failure is the envelope {error:{code,message}} (docs/errors.md).",
  },
  components: {
    securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "Session token (POST /auth/sessions) or API token (POST /tokens)" } },
  },
};

let controllers: { token: unknown }[] = [];
let cached: unknown;

export function setOpenApiControllers(list: { token: unknown }[]): void {
  controllers = list;
  cached = undefined;
}

/** The OpenAPI 3 document generated from the mounted controllers and their @tsed/schema models. */
@Controller("/openapi.json")
export class OpenApiController {
  @Get("/")
  @Public()
  @WithoutStore()
  @Summary("This API's OpenAPI 3 document")
  @(Returns(200, Object).ContentType("application/json"))
  get(): unknown {
    cached ??= generateSpec({
      tokens: controllers.map((c) => ({ token: c.token as never, rootPath: "/api/v1" })),
      specVersion: "3.0.3",
      spec: { ...OPENAPI_INFO, info: { ...OPENAPI_INFO.info, "x-kernel-version": kernelVersion() } },
    });
    return cached;
  }
}
