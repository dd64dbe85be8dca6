/**
 * xterm.js answers some of the sequences a program prints (device attributes, cursor position and status reports,
 * mode and setting reports, window size reports, colour queries, focus reports) by emitting the answer as if it had
 * been typed. This page is a window onto a stream that is replayed on every visit and that several people may watch,
 * not the terminal the session's programs talk to (the daemon's tmux answers them), so it answers none: each answer
 * would reach the agent as input, once per visit. The queries are taken by parser handlers that do nothing, through
 * xterm.js's documented parser hooks; focus reports, which xterm.js sends on focus changes rather than while parsing,
 * are told apart by what they are.
 */

/** xterm.js's IFunctionIdentifier, IDisposable and the part of its IParser used here (written out, as xterm.js's typings bring the DOM's into whatever imports them). */
interface FunctionIdentifier {
  prefix?: string;
  intermediates?: string;
  final: string;
}
type Params = (number | number[])[];
interface Disposable {
  dispose(): void;
}
export interface QueryParser {
  registerCsiHandler(id: FunctionIdentifier, callback: (params: Params) => boolean): Disposable;
  registerDcsHandler(id: FunctionIdentifier, callback: (data: string, params: Params) => boolean): Disposable;
  registerOscHandler(ident: number, callback: (data: string) => boolean): Disposable;
}

/** CSI queries that xterm.js answers: primary, secondary and tertiary device attributes; status and cursor position reports; mode reports (DECRQM); its version. */
const CSI_QUERIES: FunctionIdentifier[] = [
  { final: "c" },
  { prefix: ">", final: "c" },
  { prefix: "=", final: "c" },
  { final: "n" },
  { prefix: "?", final: "n" },
  { intermediates: "$", final: "p" },
  { prefix: "?", intermediates: "$", final: "p" },
  { prefix: ">", final: "q" },
];

/** Window operations (CSI Ps t) that report rather than act: sizes, positions, state and titles. */
const WINDOW_REPORTS = new Set([11, 13, 14, 15, 16, 18, 19, 20, 21]);

/** OSC colour sequences (palette, foreground, background, cursor) that xterm.js answers when one of their specs is `?`. */
const COLOUR_OSCS = [4, 10, 11, 12];

/** Makes xterm.js answer none of the queries it is shown; dispose to undo. */
export function answerNoQueries(parser: QueryParser): Disposable {
  const hooks = [
    ...CSI_QUERIES.map((id) => parser.registerCsiHandler(id, () => true)),
    parser.registerCsiHandler({ final: "t" }, (params) => WINDOW_REPORTS.has(Number(params[0] ?? 0))),
    // DECRQSS: a request for a setting's value.
    parser.registerDcsHandler({ intermediates: "$", final: "q" }, () => true),
    // A colour that is set (not asked for) goes on to xterm.js's own handler.
    ...COLOUR_OSCS.map((ident) => parser.registerOscHandler(ident, (data) => data.split(";").includes("?"))),
  ];
  return { dispose: () => hooks.forEach((hook) => hook.dispose()) };
}

/** Focus in and out reports (sent once a program asks for them with CSI ? 1004 h): no key a person presses makes either. */
export const isFocusReport = (data: string) => data === "\x1b[I" || data === "\x1b[O";
