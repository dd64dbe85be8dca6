/**
 * Text hub.py types into an agent's terminal (`_inject_text`: tmux `send-keys -l`, or a write to the PTY) reaches the
 * agent as keystrokes: a newline there is Enter, which would send the first half of a message on its own, and an
 * escape starts a key sequence. What the hub composes for typing is therefore one line of printable text.
 */

// C0 controls, DEL and C1 controls: none is a character an agent should receive as typed text.
// eslint-disable-next-line no-control-regex
const CONTROLS = / *[\u0000-\u001f\u007f-\u009f]+ */g;

/** `text` as one line: every run of line breaks, tabs and other control characters (with the spaces around it) becomes one space. */
export const typedLine = (text: string) => text.replace(CONTROLS, " ").trim();
