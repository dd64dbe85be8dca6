/** src/domain/one-at-a-time.ts: calls given at once run one after another, in order, and a failure stops none after it. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { oneAtATime } from "../src/domain/one-at-a-time";

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("oneAtATime", () => {
  it("never runs two calls at once, and runs them in the order they came, whatever their lengths and failures", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ turns: fc.nat(3), fails: fc.boolean() }), { minLength: 1, maxLength: 12 }), async (calls) => {
        const queue = oneAtATime();
        const started: number[] = [];
        let running = 0;
        let most = 0;
        const outcomes = await Promise.allSettled(
          calls.map(({ turns, fails }, i) =>
            queue(async () => {
              started.push(i);
              most = Math.max(most, ++running);
              for (let t = 0; t < turns; t++) await tick();
              running--;
              if (fails) throw new Error(`call ${i}`);
              return i;
            }),
          ),
        );
        expect(most).toBe(1);
        expect(started).toEqual(calls.map((_, i) => i));
        expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message))).toEqual(
          calls.map(({ fails }, i) => (fails ? `call ${i}` : i)),
        );
      }),
      { numRuns: 50 },
    );
  });
});
