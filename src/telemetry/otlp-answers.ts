/**
 * What the receiver answers, as OTLP/HTTP servers do (opentelemetry-proto docs/specification.md, "OTLP/HTTP Response"):
 * success is 200 with the signal's Export*ServiceResponse in the request's own encoding, its `partial_success` naming
 * how many points, records or spans were rejected and why. A refusal to a protobuf client is a google.rpc.Status in
 * protobuf, the body its exporter logs; a refusal to a JSON client (or one whose encoding is not known) is the hub's
 * problem document, which OTLP/JSON clients read the same way (by status; they do not parse the body).
 */
import { create, toBinary, toJson } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import type { Problem } from "../http/problem";
import { otlpMessage, RESPONSE_TYPES, type OtlpEncoding } from "./otlp-decode";
import type { OtlpSignal } from "./otlp-model";

export const PROTOBUF = "application/x-protobuf";

/** Each response's `partial_success` field counting what was rejected (the collector services' definitions). */
const REJECTED_FIELD: Record<OtlpSignal, string> = { metrics: "rejectedDataPoints", logs: "rejectedLogRecords", traces: "rejectedSpans" };

export function exportAnswer(signal: OtlpSignal, encoding: OtlpEncoding, rejected: number, reason: string | null): Response {
  const desc = otlpMessage(RESPONSE_TYPES[signal]);
  // Fully accepted: partial_success stays unset, as the spec asks.
  const message = create(desc, rejected > 0 ? { partialSuccess: { [REJECTED_FIELD[signal]]: BigInt(rejected), errorMessage: reason ?? "" } } : {});
  if (encoding === "protobuf") return new Response(toBinary(desc, message), { headers: { "Content-Type": PROTOBUF } });
  return Response.json(toJson(desc, message));
}

/** google/rpc/status.proto: `Status { int32 code = 1; string message = 2; repeated Any details = 3; }`; only the message is sent. */
const STATUS_MESSAGE_FIELD = 2;

export function refusal(problem: Problem, encoding: OtlpEncoding | null): Response {
  if (encoding !== "protobuf") return problem.toResponse();
  const body = new BinaryWriter().tag(STATUS_MESSAGE_FIELD, WireType.LengthDelimited).string(problem.detail).finish();
  return new Response(body, { status: problem.status, headers: { "Content-Type": PROTOBUF, ...problem.headers } });
}
