/**
 * A writer's frames on the terminal socket, paced. The hub takes at most 100 input, resize and capture frames a second
 * from a writer and refuses the rest, so keystrokes are gathered rather than sent one a frame: the first goes at once,
 * whatever comes in the next 10 ms goes together in the next frame (a paste is one frame, split only past the frame
 * size), and no more than FRAMES_PER_SECOND go in any second, well under the hub's limit however the network bunches
 * them. Nothing is dropped here: input waits its turn, in order; a resize waits too, and only the latest size goes.
 */

/** The shortest gap between two frames. */
export const FRAME_EVERY_MS = 10;
/** Frames in any one second: the hub allows 100; the rest is room for a network that delivers them bunched. */
export const FRAMES_PER_SECOND = 60;
/** Input bytes in one frame: their base64, in a JSON frame, stays well under the 256 KiB the hub takes in a frame. */
export const MAX_INPUT_FRAME_BYTES = 128 * 1024;

export type WriterFrame = { type: "input"; bytes: Uint8Array } | { type: "resize"; cols: number; rows: number } | { type: "capture" };

export interface Clock {
  now(): number;
  later(run: () => void, ms: number): unknown;
  cancel(timer: unknown): void;
}

const realClock: Clock = {
  now: () => performance.now(),
  later: (run, ms) => setTimeout(run, ms),
  cancel: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

export class WriterOutbox {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private size: { cols: number; rows: number } | null = null;
  private capture = false;
  /** When each frame of the last second went. */
  private sent: number[] = [];
  private timer: unknown = null;

  constructor(
    private readonly send: (frame: WriterFrame) => void,
    private readonly clock: Clock = realClock,
    private readonly maxInputBytes = MAX_INPUT_FRAME_BYTES,
  ) {}

  input(bytes: Uint8Array) {
    if (bytes.length === 0) return;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.pump();
  }

  resize(cols: number, rows: number) {
    this.size = { cols, rows };
    this.pump();
  }

  requestCapture() {
    this.capture = true;
    this.pump();
  }

  /** Takes out everything still waiting (the socket is gone); returns the input among it, which was not sent. */
  drain(): Uint8Array {
    if (this.timer !== null) this.clock.cancel(this.timer);
    this.timer = null;
    const unsent = this.take(this.pendingBytes);
    this.size = null;
    this.capture = false;
    return unsent;
  }

  private pump() {
    if (this.timer !== null) return;
    while (this.size || this.capture || this.pendingBytes > 0) {
      const wait = this.wait();
      if (wait > 0) {
        this.timer = this.clock.later(() => {
          this.timer = null;
          this.pump();
        }, wait);
        return;
      }
      this.sent.push(this.clock.now());
      this.send(this.next());
    }
  }

  /** How long until another frame may go. */
  private wait(): number {
    const now = this.clock.now();
    while (this.sent.length > 0 && now - this.sent[0]! >= 1000) this.sent.shift();
    const last = this.sent.at(-1);
    const gap = last === undefined ? 0 : last + FRAME_EVERY_MS - now;
    const full = this.sent.length >= FRAMES_PER_SECOND ? this.sent[0]! + 1000 - now : 0;
    return Math.max(gap, full);
  }

  /** A size before the text typed at it; a capture before input. */
  private next(): WriterFrame {
    if (this.size) {
      const frame = { type: "resize" as const, ...this.size };
      this.size = null;
      return frame;
    }
    if (this.capture) {
      this.capture = false;
      return { type: "capture" };
    }
    return { type: "input", bytes: this.take(utf8Boundary(this.pending, this.pendingBytes, this.maxInputBytes)) };
  }

  /** The first `count` waiting bytes, in order, taken out. */
  private take(count: number): Uint8Array {
    const out = new Uint8Array(count);
    let at = 0;
    while (at < count) {
      const head = this.pending[0]!;
      const part = head.subarray(0, count - at);
      out.set(part, at);
      at += part.length;
      if (part.length === head.length) this.pending.shift();
      else this.pending[0] = head.subarray(part.length);
    }
    this.pendingBytes -= count;
    return out;
  }
}

/** How many of the waiting bytes fit a frame, cut where no UTF-8 character is split (when it can be). */
function utf8Boundary(pending: Uint8Array[], total: number, max: number): number {
  if (total <= max) return total;
  let cut = max;
  for (let back = 0; back < 3 && isContinuation(byteAt(pending, cut)); back++) cut--;
  return isContinuation(byteAt(pending, cut)) ? max : cut;
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

function byteAt(chunks: Uint8Array[], index: number): number {
  for (const chunk of chunks) {
    if (index < chunk.length) return chunk[index]!;
    index -= chunk.length;
  }
  return 0;
}

/** What a banner says of input that did not reach the session: how much, and how it began and ended, control keys shown. */
export function describeUnsent(bytes: Uint8Array): string {
  const text = new TextDecoder().decode(bytes);
  const chars = [...text];
  const shown = chars.map((c) => (c === "\r" || c === "\n" ? "⏎" : c === "\t" ? "⇥" : c === "\x1b" ? "␛" : c < " " || c === "\x7f" ? "�" : c));
  const preview = shown.length <= 40 ? shown.join("") : `${shown.slice(0, 20).join("")}…${shown.slice(-15).join("")}`;
  return `${chars.length} ${chars.length === 1 ? "character" : "characters"} (“${preview}”)`;
}

/** How long input must flow without a refusal before what the hub refused is no longer told. */
export const REFUSAL_CLEARS_AFTER_MS = 1000;

/**
 * What the hub refused of a writer's frames, and the input that was not sent (refused, or typed while the terminal
 * was not connected), kept for a banner until input flows again: a frame sent and a second without a refusal.
 */
export class Refusals {
  private unsent: Uint8Array[] = [];
  private reason: string | null = null;
  private timer: unknown = null;

  constructor(
    private readonly changed: () => void,
    private readonly clock: Clock = realClock,
  ) {}

  /** The hub refused a frame (its message, shown as it is), or input that did not reach the session and why. */
  refused(reason: string, bytes?: Uint8Array) {
    if (this.timer !== null) this.clock.cancel(this.timer);
    this.timer = null;
    if (bytes && bytes.length > 0) this.unsent.push(bytes);
    this.reason = reason;
    this.changed();
  }

  /** An input frame went to the hub. */
  delivered() {
    if (this.reason === null || this.timer !== null) return;
    this.timer = this.clock.later(() => {
      this.timer = null;
      this.unsent = [];
      this.reason = null;
      this.changed();
    }, REFUSAL_CLEARS_AFTER_MS);
  }

  get text(): string | null {
    if (this.reason === null) return null;
    if (this.unsent.length === 0) return this.reason;
    const bytes = new Uint8Array(this.unsent.reduce((n, b) => n + b.length, 0));
    this.unsent.reduce((at, b) => (bytes.set(b, at), at + b.length), 0);
    return `Not sent to the session: ${describeUnsent(bytes)} — ${this.reason}.`;
  }

  dispose() {
    if (this.timer !== null) this.clock.cancel(this.timer);
    this.timer = null;
  }
}
