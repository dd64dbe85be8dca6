/**
 * One webhook delivery on the wire (API.md "Webhooks"): JSON `{type,
 * timestamp, data}` signed the Standard Webhooks way by the `standardwebhooks`
 * library, and one attempt at sending it (or any delivery, the telemetry
 * export's too): 10 s at most, no redirects followed, at most 4 KiB of the
 * answer read.
 */
import { Webhook } from "standardwebhooks";

export const ATTEMPT_TIMEOUT_MS = 10_000;
export const MAX_RESPONSE_BYTES = 4096;

/** A new endpoint secret: `whsec_` and 24 random bytes in base64, the format the libraries read. */
export const newWebhookSecret = () => `whsec_${crypto.getRandomValues(new Uint8Array(24)).toBase64()}`;

export interface WebhookMessage {
  id: string;
  type: string;
  /** When the event happened (ISO-8601). */
  timestamp: string;
  data: Record<string, unknown>;
  /** The task's W3C trace context: sent as the `traceparent` header, so the receiver's work joins the trace. */
  traceparent?: string | null;
}

/**
 * The body and headers of a delivery. Every secret given signs it (the
 * current one and, for a day after a rotation, the previous one), so a
 * receiver holding either verifies it.
 */
export function signedRequest(message: WebhookMessage, secrets: string[], now = new Date()) {
  const body = JSON.stringify({ type: message.type, timestamp: message.timestamp, data: message.data });
  const signature = secrets.map((s) => new Webhook(s).sign(message.id, now, body)).join(" ");
  return {
    body,
    headers: {
      "Content-Type": "application/json",
      "User-Agent": "orchestratia-hub",
      "webhook-id": message.id,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": signature,
      ...(message.traceparent ? { traceparent: message.traceparent } : {}),
    },
  };
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string | null;
  /** How long the receiver asked to be left alone (`Retry-After` on a 429 or 503), if it did. */
  retryAfterMs?: number | null;
}

/** A `Retry-After` header's wait: seconds, or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

/** Reads at most MAX_RESPONSE_BYTES of an answer and lets the rest go. */
async function headOf(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  while (size < MAX_RESPONSE_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
  const bytes = new Uint8Array(Math.min(size, MAX_RESPONSE_BYTES));
  let at = 0;
  for (const p of parts) {
    const take = Math.min(p.byteLength, bytes.byteLength - at);
    bytes.set(p.subarray(0, take), at);
    at += take;
  }
  return new TextDecoder().decode(bytes);
}

/** One POST of a delivery (a webhook's signed JSON, or a collector's protobuf). */
export async function attempt(url: string, request: { body: BodyInit; headers: Record<string, string> }): Promise<AttemptResult> {
  const started = performance.now();
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    const ok = res.status >= 200 && res.status < 300;
    // The status decides; an answer's body that never ends does not undo a 2xx.
    const responseBody = await headOf(res).catch(() => null);
    const wait = res.status === 429 || res.status === 503 ? retryAfterMs(res.headers.get("Retry-After")) : null;
    return {
      ok,
      statusCode: res.status,
      error: ok ? null : `answered ${res.status}`,
      durationMs: Math.round(performance.now() - started),
      responseBody,
      retryAfterMs: wait,
    };
  } catch (e) {
    const error =
      e instanceof Error && e.name === "TimeoutError"
        ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`
        : `could not connect: ${e instanceof Error ? e.message : String(e)}`;
    return { ok: false, statusCode: null, error, durationMs: Math.round(performance.now() - started), responseBody: null };
  }
}
