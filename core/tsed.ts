/**
 * `nms-core/tsed`: the Ts.ED API a plugin writes controllers, models and services with, from the host's own copy.
 * A plugin outside this package imports these from here rather than depending on @tsed/* itself: two copies of
 * Ts.ED in one process would mean two DI containers, and a plugin's services would never be found.
 */
export * from "@tsed/schema";
export { Controller, Inject, Injectable, Constant, Value } from "@tsed/di";
export { PathParams, QueryParams, HeaderParams, Context } from "@tsed/platform-params";
export type { PlatformContext } from "@tsed/platform-http";
