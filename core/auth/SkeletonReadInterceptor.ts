import { Inject, Interceptor, type InterceptorContext, type InterceptorMethods, type InterceptorNext } from "@tsed/di";
import { KernelRuntime } from "../config/KernelRuntime.js";

/** Answers a route's declared skeleton read without calling it when there is no store. */
@Interceptor()
export class SkeletonReadInterceptor implements InterceptorMethods {
  @Inject(KernelRuntime)
  private runtime: KernelRuntime;

  intercept(context: InterceptorContext<unknown, { answer: unknown }>, next: InterceptorNext): unknown {
    if (this.runtime.skeleton) return structuredClone(context.options?.answer);
    return next();
  }
}
