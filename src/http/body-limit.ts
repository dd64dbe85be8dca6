/**
 * Request bodies: held to the size limit (413), and a body that breaks off
 * mid-stream (a cut connection, malformed chunked encoding) is the client's
 * fault: 400, wherever it is first read.
 */
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { HubEnv } from "./context";
import { badRequest, Problem } from "./problem";

const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

const unreadable = () => badRequest("The request body could not be read: the connection broke off or its encoding is malformed", "BODY_UNREADABLE");

/** The same bytes, except that a failure to read them is a 400 problem. */
function failingAsBadRequest(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch {
        controller.error(unreadable());
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

export const limitedBody = createMiddleware<HubEnv>((c, next) => {
  // Blob uploads stream to R2 and are held to their DataRef's declared size instead.
  if (c.req.path.startsWith("/api/v1/blobs/")) return next();
  if (c.req.raw.body) c.req.raw = new Request(c.req.raw, { body: failingAsBadRequest(c.req.raw.body) });
  const maxSize = Number(c.env.MAX_BODY_BYTES) || DEFAULT_MAX_BODY_BYTES;
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new Problem(413, "PAYLOAD_TOO_LARGE", `The request body is larger than the ${maxSize}-byte limit`);
    },
  })(c, next);
});
