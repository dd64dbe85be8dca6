/**
 * Request bodies: held to the size limit (413), and a body that breaks off
 * mid-stream (a cut connection, malformed chunked encoding) is the client's
 * fault: 400, wherever it is first read.
 */
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { HubEnv } from "./context";
import { badRequest, Problem } from "./problem";
import { MAX_SNAPSHOT_BYTES } from "../protocol/code-health";

const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
/**
 * A daemon posts its permission log in one request (up to 10,000 entries, each with its tool's whole input: a file
 * written, say); the hub keeps at most 8 KiB of each input, but must read the post to cut it.
 */
const PERMISSION_LOG_PATH = "/api/v1/server/permissions/log";
export const PERMISSION_LOG_MAX_BODY_BYTES = 16 * 1024 * 1024;

/** A person's upload to a session's machine streams to R2, held to its own limit by its route (routes/file-transfers.ts). */
const SESSION_UPLOAD_PATH = /^\/api\/v1\/projects\/[^/]+\/sessions\/[^/]+\/uploads\/?$/;
/** A daemon sends back a file of up to 10 MiB people asked for, as multipart form data. */
const PULL_UPLOAD_PATH = /^\/api\/v1\/server\/files\/pulls\/[^/]+\/upload\/?$/;
export const PULL_UPLOAD_MAX_BODY_BYTES = 10 * 1024 * 1024 + 64 * 1024;

/** The OTLP/HTTP receiver's paths (src/telemetry/receiver.ts). */
const OTLP_PATH = /^\/v1\/(metrics|logs|traces)\/?$/;

/** The doors Slack posts to. */
const SLACK_DOOR_PATH = /^\/slack\/(commands|interactions|events)\/?$/;

/** A code health snapshot is posted whole (protocol/code-health.ts). */
const SNAPSHOT_PATH = "/api/v1/server/architecture/snapshot";

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

const tooLarge = (maxSize: number) => new Problem(413, "PAYLOAD_TOO_LARGE", `The request body is larger than the ${maxSize}-byte limit`);

export const limitedBody = createMiddleware<HubEnv>(async (c, next) => {
  // Blob uploads stream to R2 and are held to their DataRef's declared size instead; uploads to a machine, to 100 MiB.
  if (c.req.path.startsWith("/api/v1/blobs/") || (c.req.method === "POST" && SESSION_UPLOAD_PATH.test(c.req.path))) return next();
  // An A2A request is held to its own limit by its route, which words the refusal as a JSON-RPC error; an OTLP export
  // by its receiver, which checks the credential before reading and bounds the body again once inflated.
  if (c.req.path.startsWith("/a2a/") || OTLP_PATH.test(c.req.path)) return next();
  // A trigger's door checks the caller's secret before reading and holds the body to its own, smaller limit.
  if (c.req.path.startsWith("/hooks/triggers/")) return next();
  // So does Slack's (routes/slack-doors.ts): its requests are small, and the signature is checked before they are parsed.
  if (SLACK_DOOR_PATH.test(c.req.path)) return next();
  const raw = c.req.raw;
  if (!raw.body) return next();
  const configured = Number(c.env.MAX_BODY_BYTES) || DEFAULT_MAX_BODY_BYTES;
  const maxSize =
    c.req.path === PERMISSION_LOG_PATH
      ? Math.max(configured, PERMISSION_LOG_MAX_BODY_BYTES)
      : c.req.path === SNAPSHOT_PATH
        ? MAX_SNAPSHOT_BYTES
        : PULL_UPLOAD_PATH.test(c.req.path)
          ? Math.max(configured, PULL_UPLOAD_MAX_BODY_BYTES)
          : configured;
  const declared = raw.headers.get("Content-Length");
  if (declared !== null && !raw.headers.has("Transfer-Encoding")) {
    // A body of declared length is read here, in one native read: cheaper than a stream wrapped in JavaScript, which
    // costs every request (and an agent's are small).
    if (Number(declared) > maxSize) throw tooLarge(maxSize);
    let bytes: ArrayBuffer;
    try {
      bytes = await raw.arrayBuffer();
    } catch {
      throw unreadable();
    }
    c.req.raw = new Request(raw, { body: bytes });
    return next();
  }
  c.req.raw = new Request(raw, { body: failingAsBadRequest(raw.body) });
  return bodyLimit({
    maxSize,
    onError: () => {
      throw tooLarge(maxSize);
    },
  })(c, next);
});
