/**
 * Remote commands (API.md "Remote exec and agent-to-agent file transfer"):
 * the link hands its daemon `remote_exec {request_id, command}` and waits for
 * the `remote_exec_result {request_id, exit_code, stdout, stderr}` hub.py's
 * `_handle_remote_exec` sends back (it gives a command 120 s).
 */
import { PendingRequests, type Waited } from "./pending-requests";

/** The longest a caller may wait for a command (the daemon itself stops one after 120 s). */
export const MAX_EXEC_TIMEOUT_S = 120;
/** A command's output (stdout and stderr together, UTF-8) is cut beyond this. */
export const MAX_EXEC_OUTPUT_BYTES = 1 << 20;

export interface ExecOutput {
  exit_code: number;
  stdout: string;
  stderr: string;
}

/** `offline`: the daemon was not connected, and nothing was sent; `gone`: it left before answering. */
export type ExecOutcome = ({ kind: "answered" } & ExecOutput) | { kind: "offline" } | { kind: "gone" } | { kind: "timed_out" };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The first `max` bytes of `text`'s UTF-8, never splitting a character. */
function utf8Head(bytes: Uint8Array, max: number): string {
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return decoder.decode(bytes.subarray(0, end));
}

/** Room kept in a cut stream's share for the line saying it was cut, so that a cut answer is within the bound with it. */
const NOTE_BYTES = 256;
const cutNote = (total: number, kept: number) =>
  `\n[output cut by the hub: this stream had ${total} bytes, the first ${kept} are shown; a command's output is kept to ${MAX_EXEC_OUTPUT_BYTES} bytes]\n`;

/**
 * The output as answered: unchanged within MAX_EXEC_OUTPUT_BYTES; beyond it,
 * each stream over its share is cut (the smaller stream keeps what it can of
 * half the bound, the other the rest) and ends with a line saying so.
 */
export function cutExecOutput(stdout: string, stderr: string): { stdout: string; stderr: string; cut: boolean } {
  // A string's UTF-8 is at most three bytes per UTF-16 unit: short ones need no encoding to be known small.
  if (3 * (stdout.length + stderr.length) <= MAX_EXEC_OUTPUT_BYTES) return { stdout, stderr, cut: false };
  const out = encoder.encode(stdout);
  const err = encoder.encode(stderr);
  if (out.byteLength + err.byteLength <= MAX_EXEC_OUTPUT_BYTES) return { stdout, stderr, cut: false };
  const half = MAX_EXEC_OUTPUT_BYTES / 2;
  const errShare = err.byteLength <= half ? err.byteLength : Math.max(half, MAX_EXEC_OUTPUT_BYTES - out.byteLength);
  const outShare = MAX_EXEC_OUTPUT_BYTES - errShare;
  const cut = (bytes: Uint8Array, text: string, share: number) => {
    if (bytes.byteLength <= share) return text;
    const head = utf8Head(bytes, share - NOTE_BYTES);
    return head + cutNote(bytes.byteLength, encoder.encode(head).byteLength);
  };
  return { stdout: cut(out, stdout, outShare), stderr: cut(err, stderr, errShare), cut: true };
}

/** A daemon's `remote_exec_result`, read the way the CLI reads it (missing fields as the CLI defaults them). */
export function execOutputOf(frame: Record<string, unknown>): ExecOutput {
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  const { stdout, stderr } = cutExecOutput(text(frame.stdout), text(frame.stderr));
  return { exit_code: Number.isSafeInteger(frame.exit_code) ? (frame.exit_code as number) : -1, stdout, stderr };
}

/** Commands handed to the daemon and not answered yet, by request id. */
export class PendingExecs extends PendingRequests<ExecOutput> {
  /** A `remote_exec_result` came: false when nothing waits for it (late, or not asked for). */
  answeredBy(frame: Record<string, unknown>): boolean {
    return this.answered(frame.request_id, execOutputOf(frame));
  }
}

/** A waited command as the route reads it. */
export const execOutcomeOf = (waited: Waited<ExecOutput>): ExecOutcome => (waited.kind === "answered" ? { kind: "answered", ...waited.answer } : waited);
