/**
 * The dashboard terminal's outbox (web/src/terminal-input.ts) on a pretend clock: keystrokes and pastes gathered into
 * frames, in order, whole, paced under the hub's 100 frames a second; and the banner's account of input the hub refused.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  describeUnsent,
  FRAME_EVERY_MS,
  FRAMES_PER_SECOND,
  MAX_INPUT_FRAME_BYTES,
  REFUSAL_CLEARS_AFTER_MS,
  Refusals,
  WriterOutbox,
  type Clock,
  type WriterFrame,
} from "../web/src/terminal-input";

/** A clock that moves only when told, running what falls due in order. */
class PretendClock implements Clock {
  time = 0;
  private timers: { at: number; run: () => void; id: number }[] = [];
  private ids = 0;
  now = () => this.time;
  later = (run: () => void, ms: number) => {
    const id = ++this.ids;
    this.timers.push({ at: this.time + ms, run, id });
    return id;
  };
  cancel = (id: unknown) => {
    this.timers = this.timers.filter((t) => t.id !== id);
  };
  advance(ms: number) {
    const end = this.time + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const due = this.timers[0];
      if (!due || due.at > end) break;
      this.timers.shift();
      this.time = due.at;
      due.run();
    }
    this.time = end;
  }
  get waiting() {
    return this.timers.length;
  }
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);
const utf8 = (s: string) => new TextEncoder().encode(s);

function outbox(maxBytes = MAX_INPUT_FRAME_BYTES) {
  const clock = new PretendClock();
  const sent: { at: number; frame: WriterFrame }[] = [];
  const box = new WriterOutbox((frame) => sent.push({ at: clock.time, frame }), clock, maxBytes);
  const inputs = () => sent.flatMap((s) => (s.frame.type === "input" ? [text(s.frame.bytes)] : []));
  return { clock, box, sent, inputs };
}

describe("the terminal's outbox", () => {
  it("sends the first keystroke at once and gathers what follows within 10 ms into the next frame", () => {
    const { clock, box, sent, inputs } = outbox();
    box.input(utf8("T"));
    expect(inputs()).toEqual(["T"]);
    clock.advance(3);
    box.input(utf8("w"));
    clock.advance(3);
    box.input(utf8("o"));
    expect(inputs()).toEqual(["T"]);
    clock.advance(4);
    expect(inputs()).toEqual(["T", "wo"]);
    expect(sent.map((s) => s.at)).toEqual([0, FRAME_EVERY_MS]);
    // Quiet for a while: the next keystroke goes at once again.
    clock.advance(500);
    box.input(utf8(" "));
    expect(inputs()).toEqual(["T", "wo", " "]);
    expect(clock.waiting).toBe(0);
  });

  it("sends a paste as one frame, and splits only what is over the frame size, never inside a character", () => {
    const { clock, box, inputs } = outbox(10);
    box.input(utf8("Two endpoints, REST"));
    clock.advance(100);
    expect(inputs()).toEqual(["Two endpoi", "nts, REST"]);
    const { clock: c2, box: b2, inputs: i2 } = outbox(10);
    // é is 2 bytes and → 3: a cut at 10 bytes would fall inside the arrow.
    b2.input(utf8("abcdefgh→é"));
    c2.advance(100);
    expect(i2()).toEqual(["abcdefgh", "→é"]);
    const { clock: c3, box: b3, inputs: i3 } = outbox();
    const paste = "x".repeat(2000);
    b3.input(utf8(paste));
    c3.advance(100);
    expect(i3()).toEqual([paste]);
  });

  it("keeps any typing, pasting, resizing and capturing in order and whole, a frame at most every 10 ms and at most 60 in any second", () => {
    const action = fc.oneof(
      fc.record({ kind: fc.constant("type" as const), text: fc.string({ unit: "grapheme", minLength: 1, maxLength: 3 }) }),
      fc.record({ kind: fc.constant("paste" as const), text: fc.string({ unit: "grapheme", minLength: 50, maxLength: 300 }) }),
      fc.record({ kind: fc.constant("resize" as const), cols: fc.integer({ min: 2, max: 300 }), rows: fc.integer({ min: 1, max: 100 }) }),
      fc.record({ kind: fc.constant("capture" as const) }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 15 }), action), { maxLength: 400 }), fc.integer({ min: 4, max: 64 }), (steps, maxBytes) => {
        const { clock, box, sent } = outbox(maxBytes);
        let typed = "";
        let lastSize: string | null = null;
        let captures = 0;
        for (const [wait, a] of steps) {
          clock.advance(wait);
          if (a.kind === "resize") (box.resize(a.cols, a.rows), (lastSize = `${a.cols}x${a.rows}`));
          else if (a.kind === "capture") (box.requestCapture(), captures++);
          else (box.input(utf8(a.text)), (typed += a.text));
        }
        while (clock.waiting > 0) clock.advance(1000);
        const bytes = sent.flatMap((s) => (s.frame.type === "input" ? [...s.frame.bytes] : []));
        expect(text(Uint8Array.from(bytes))).toBe(typed);
        for (const s of sent)
          if (s.frame.type === "input") (expect(s.frame.bytes.length).toBeGreaterThan(0), expect(s.frame.bytes.length).toBeLessThanOrEqual(maxBytes));
        const sizes = sent.flatMap((s) => (s.frame.type === "resize" ? [`${s.frame.cols}x${s.frame.rows}`] : []));
        if (lastSize) expect(sizes.at(-1)).toBe(lastSize);
        expect(sent.filter((s) => s.frame.type === "capture").length).toBeLessThanOrEqual(captures);
        if (captures > 0) expect(sent.some((s) => s.frame.type === "capture")).toBe(true);
        const times = sent.map((s) => s.at);
        for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(FRAME_EVERY_MS);
        for (let i = FRAMES_PER_SECOND; i < times.length; i++) expect(times[i]! - times[i - FRAMES_PER_SECOND]!).toBeGreaterThanOrEqual(1000);
      }),
      { numRuns: 200 },
    );
  });

  it("keeps 300 characters typed at 300 a second whole, in fewer frames than the hub allows", () => {
    const { clock, box, sent, inputs } = outbox();
    const typed = Array.from({ length: 300 }, (_, i) => "Two endpoints, REST and contracts é→ "[i % 37]!).join("");
    for (const c of typed) (box.input(utf8(c)), clock.advance(1000 / 300));
    clock.advance(1000);
    expect(inputs().join("")).toBe(typed);
    const first = sent[0]!.at;
    expect(sent.filter((s) => s.at - first < 1000).length).toBeLessThanOrEqual(FRAMES_PER_SECOND);
  });

  it("hands back the input still waiting when the socket goes, and sends nothing of it later", () => {
    const { clock, box, inputs } = outbox();
    box.input(utf8("a"));
    box.input(utf8("bc"));
    box.resize(80, 24);
    expect(text(box.drain())).toBe("bc");
    clock.advance(1000);
    expect(inputs()).toEqual(["a"]);
    expect(box.drain().length).toBe(0);
  });
});

describe("what the banner says of input that was not sent", () => {
  it("counts characters, shows how the text began and ended, and makes control keys visible", () => {
    expect(describeUnsent(utf8("Twoon"))).toBe("5 characters (“Twoon”)");
    expect(describeUnsent(utf8("é"))).toBe("1 character (“é”)");
    expect(describeUnsent(utf8("ls\r\t\x1b[A\x03"))).toBe("8 characters (“ls⏎⇥␛[A�”)");
    const long = `${"a".repeat(30)}${"b".repeat(30)}${"c".repeat(30)}`;
    expect(describeUnsent(utf8(long))).toBe(`90 characters (“${"a".repeat(20)}…${"c".repeat(15)}”)`);
  });

  it("keeps what was refused until input flows for a second without a refusal, adding up what several refusals held", () => {
    const clock = new PretendClock();
    let changes = 0;
    const r = new Refusals(() => changes++, clock);
    expect(r.text).toBeNull();
    r.refused("the hub refused it: at most 100 input, resize and capture frames a second", utf8("Two"));
    r.refused("the hub refused it: at most 100 input, resize and capture frames a second", utf8("on"));
    expect(r.text).toBe("Not sent to the session: 5 characters (“Twoon”) — the hub refused it: at most 100 input, resize and capture frames a second.");
    // Input goes out again, but the hub refuses that too before a second is up: the banner stays and grows.
    r.delivered();
    clock.advance(REFUSAL_CLEARS_AFTER_MS - 1);
    r.refused("the terminal was not connected", utf8("!"));
    clock.advance(10);
    expect(r.text).toContain("6 characters (“Twoon!”) — the terminal was not connected");
    // Nothing flows, nothing clears.
    clock.advance(60_000);
    expect(r.text).not.toBeNull();
    r.delivered();
    clock.advance(REFUSAL_CLEARS_AFTER_MS);
    expect(r.text).toBeNull();
    expect(changes).toBe(4);
    // A refusal with no input (a capture too soon) is the hub's message as it is.
    r.refused("one capture every 5 s");
    expect(r.text).toBe("one capture every 5 s");
  });
});
