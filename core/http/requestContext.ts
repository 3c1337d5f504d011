import { getContext } from "@tsed/di";
import { JsonLogger, type Logger } from "../logging/Logger.js";
import type { Caller } from "../auth/Caller.js";

let logger: Logger = new JsonLogger("info");

export function setKernelLogger(l: Logger): void {
  logger = l;
}

/** The kernel's root logger (components take children of it). */
export function kernelLogger(): Logger {
  return logger;
}

const CALLER_KEY = "nms:caller";

export function setCaller(ctx: { set(key: string, value: unknown): unknown }, caller: Caller): void {
  ctx.set(CALLER_KEY, caller);
}

/** The authenticated caller of the current request (set by the auth guard), or undefined outside a request. */
export function currentCaller(): Caller | undefined {
  return getContext()?.get(CALLER_KEY) as Caller | undefined;
}
