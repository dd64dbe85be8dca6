/**
 * A session's live terminal (xterm.js, loaded on demand): as wide as the page
 * gives it, refitted when that changes, and read-only unless the hub names
 * this person a writer, in which case keystrokes and the size go to the session.
 * It answers none of the queries the session prints (terminal-replies.ts): only
 * what the person types or pastes reaches the session.
 */
import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import { useEffect, useRef, useState } from "preact/hooks";
import { TerminalLink, type StatusChange, type TerminalLinkState } from "../terminal-link";
import { answerNoQueries, isFocusReport } from "../terminal-replies";
import { adoptTerminalStyles } from "../xterm-styles";

const STATE_TEXT: Record<TerminalLinkState, string> = {
  connecting: "connecting…",
  live: "live",
  lagging: "paused",
  reconnecting: "reconnecting…",
  ended: "disconnected",
};

/** Full reset (RIS), written in order with the output so that output already queued is cleared too. */
const RESET = "\x1bc";

const THEME = { background: "#101318", foreground: "#e6e9ef", cursor: "#7d9cff", selectionBackground: "#33467c" };

export interface TerminalProps {
  projectId: string;
  sessionId: string;
  /** Names the terminal to assistive technology. */
  label: string;
  onStatus: (change: StatusChange) => void;
}

export function SessionTerminal({ projectId, sessionId, label, onStatus }: TerminalProps) {
  const box = useRef<HTMLDivElement>(null);
  const link = useRef<TerminalLink | null>(null);
  const statusListener = useRef(onStatus);
  statusListener.current = onStatus;
  const [state, setState] = useState<TerminalLinkState>("connecting");
  const [writer, setWriter] = useState<boolean | null>(null);
  const [ended, setEnded] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [scrollback, setScrollback] = useState<string[] | null>(null);

  useEffect(() => {
    const container = box.current!;
    const removeStyles = adoptTerminalStyles(container);
    const term = new Terminal({
      disableStdin: true,
      fontFamily: 'ui-monospace, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace',
      fontSize: 13,
      scrollback: 5000,
      theme: THEME,
    });
    answerNoQueries(term.parser);
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(container);
    const terminal = new TerminalLink(projectId, sessionId, {
      clear: () => term.write(RESET),
      writer: (canWrite) => {
        setWriter(canWrite);
        term.options.disableStdin = !canWrite;
        // The session takes the size of the writer's terminal.
        if (canWrite) terminal.resize(term.cols, term.rows);
      },
      output: (bytes, shown) => term.write(bytes, shown),
      status: (change) => {
        // An ended session takes no more input; what it printed stays to read.
        const over = change.status === "closed" || change.status === "error";
        setEnded(over);
        term.options.disableStdin = over || !terminal.writer;
        statusListener.current(change);
      },
      scrollback: setScrollback,
      notice: setNotice,
      state: setState,
    });
    link.current = terminal;
    term.onData((text) => isFocusReport(text) || terminal.input(text));
    term.onBinary((text) => terminal.binaryInput(text));
    term.onResize(({ cols, rows }) => terminal.resize(cols, rows));
    fit.fit();
    let frame = 0;
    const resized = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => fit.fit());
    });
    resized.observe(container);
    terminal.start();
    return () => {
      terminal.stop();
      resized.disconnect();
      cancelAnimationFrame(frame);
      term.dispose();
      removeStyles();
      link.current = null;
    };
  }, [projectId, sessionId]);

  return (
    <section class="terminal-panel" aria-label={label}>
      <div class="terminal-tools">
        <span class={`feed feed-${state === "lagging" ? "reconnecting" : state === "ended" ? "closed" : state}`} role="status" data-terminal={state}>
          terminal {STATE_TEXT[state]}
        </span>
        {writer === false && (
          <span class="read-only" data-read-only>
            Read-only: you can watch this session but not type into it.
          </span>
        )}
        {writer && ended && <span class="muted">The session has ended: its output stays here to read.</span>}
        {writer && (
          <button type="button" onClick={() => link.current?.capture()} disabled={state !== "live" && state !== "lagging"}>
            Capture scrollback
          </button>
        )}
      </div>
      {notice && (
        <p class="problem" role="alert">
          {notice}
        </p>
      )}
      <div class="terminal-frame">
        <div class="terminal-screen" ref={box} data-writer={writer === null ? undefined : String(writer)} />
      </div>
      {scrollback && (
        <details class="scrollback" open>
          <summary>Scrollback ({scrollback.length} lines)</summary>
          <pre>{scrollback.join("\n")}</pre>
        </details>
      )}
    </section>
  );
}
