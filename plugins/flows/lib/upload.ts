/** Reading a binary request body (an uploaded file) with a size cap, for routes the JSON body parser does not serve. */
import type { IncomingMessage } from "node:http";
import { ApiError } from "../../../core/index.js";

const tooLarge = (max: number) =>
  new ApiError(
    413,
    "payload_too_large",
    `The file is larger than this service accepts (${Math.floor(max / 1048576)} MiB, pluginConfig.flows.asnUploadMaxMiB).`,
  );

/**
 * The body of an `application/octet-stream` request, whole, at most `max` bytes. Another media type answers 415
 * `unsupported_media_type`, a Content-Encoding other than identity 415 `unsupported_encoding`, a larger body 413
 * `payload_too_large` (at once when Content-Length says so), an empty one 400 `invalid_asn_table`.
 */
export async function readBinaryBody(req: IncomingMessage, max: number): Promise<Buffer> {
  const type = String(req.headers["content-type"] ?? "")
    .split(";")[0]
    .trim()
    .toLowerCase();
  if (type !== "application/octet-stream")
    throw new ApiError(415, "unsupported_media_type", "Send the file as the request body with Content-Type: application/octet-stream.");
  const encoding = String(req.headers["content-encoding"] ?? "identity")
    .trim()
    .toLowerCase();
  if (encoding !== "identity") throw new ApiError(415, "unsupported_encoding", "The request body encoding is not supported (send the file uncompressed).");
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) throw tooLarge(max);
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        cleanup();
        req.resume(); // the rest is read and dropped, so the answer reaches the client
        reject(tooLarge(max));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve();
    };
    const onError = () => {
      cleanup();
      reject(new ApiError(400, "bad_request", "The request could not be read."));
    };
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onError);
  });
  const body = Buffer.concat(chunks, size);
  if (!body.length) throw new ApiError(400, "invalid_asn_table", "The request body is empty: send the MMDB file.");
  return body;
}
