import { Exception } from "@tsed/exceptions";

/**
 * The one error type handlers throw. `code` is the stable machine code of the
 * envelope; `message` is an operator-facing sentence and must never carry
 * internal error text (see docs/errors.md).
 */
export class ApiError extends Exception {
  constructor(
    status: number,
    public readonly code: string,
    message: string,
  ) {
    super(status, message);
    this.name = "ApiError";
  }

  toEnvelope(): ErrorEnvelopeBody {
    return { error: { code: this.code, message: this.message } };
  }
}

export interface ErrorEnvelopeBody {
  error: { code: string; message: string };
}

export const badRequest = (code: string, message: string) => new ApiError(400, code, message);
export const unauthorized = (message = "A valid bearer token is required.") => new ApiError(401, "unauthorized", message);
export const forbidden = (code: string, message: string) => new ApiError(403, code, message);
export const notFound = (message = "No such resource.", code = "not_found") => new ApiError(404, code, message);
export const conflict = (code: string, message: string) => new ApiError(409, code, message);
export const storeUnavailable = () =>
  new ApiError(503, "store_unavailable", "This deployment has no durable store (skeleton mode); the operation is unavailable.");
export const notImplemented = (message = "This operation is not built yet.") => new ApiError(501, "not_implemented", message);
