/**
 * A cron expression in words ("At 02:00, Monday through Friday"), by cronstrue, which is large and so loaded only when a
 * schedule is first shown. The hub reads the expression (croner); this only describes it, so an expression cronstrue
 * cannot read is shown as it is.
 */
import { useEffect, useState } from "preact/hooks";

type Describe = (expression: string) => string;

let loading: Promise<Describe> | null = null;

/** The nicknames croner takes, as the five fields cronstrue reads. */
const NICKNAMES: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const describer = () =>
  (loading ??= import("cronstrue").then(
    (m) => (expression: string) =>
      m.default.toString(NICKNAMES[expression.trim().toLowerCase()] ?? expression, {
        use24HourTimeFormat: true,
        throwExceptionOnParseError: true,
        verbose: false,
      }),
  ));

/** The expression in words; null while cronstrue loads, or when it cannot read the expression (`unreadable` then says so). */
export function useCronWords(expression: string): { words: string | null; unreadable: boolean } {
  const [state, setState] = useState<{ words: string | null; unreadable: boolean }>({ words: null, unreadable: false });
  useEffect(() => {
    let live = true;
    if (!expression.trim()) return setState({ words: null, unreadable: false });
    void describer().then(
      (describe) => {
        if (!live) return;
        try {
          setState({ words: describe(expression), unreadable: false });
        } catch {
          setState({ words: null, unreadable: true });
        }
      },
      () => live && setState({ words: null, unreadable: false }),
    );
    return () => {
      live = false;
    };
  }, [expression]);
  return state;
}

export function CronWords({ expression }: { expression: string }) {
  const { words } = useCronWords(expression);
  return <span class="cron-words">{words ?? ""}</span>;
}
