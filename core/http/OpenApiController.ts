import { Controller } from "@tsed/di";
import { Get, Returns, Summary } from "@tsed/schema";
import { Public, WithoutStore } from "../auth/decorators.js";

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

let document: unknown;

/** The document the kernel built at boot (buildOpenApiDocument), served as it is. */
export function setOpenApiDocument(doc: unknown): void {
  document = doc;
}

/** The OpenAPI 3 document of the mounted controllers and their @tsed/schema models, built and checked at boot. */
@Controller("/openapi.json")
export class OpenApiController {
  @Get("/")
  @Public()
  @WithoutStore()
  @Summary("This API's OpenAPI 3 document")
  @(Returns(200, Object).ContentType("application/json"))
  get(): unknown {
    return document;
  }
}
