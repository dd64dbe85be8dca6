/**
 * xterm.js's styles under the dashboard's Content-Security-Policy, which
 * allows inline style attributes (xterm.js colours 24-bit cells with them) but
 * no inline <style> element. xterm.js writes its theme, sizes and scrollbar
 * into <style> elements of its own, and a connected <style> is checked against
 * the policy (and refused, with a console error) each time its text changes,
 * whatever its type or media. So while a terminal is open, the <style> that
 * xterm.js asks the document for is handed out as an inert <template> holding
 * the same text, which the browser neither renders nor applies; that text is
 * copied into a constructed stylesheet, which the policy allows. xterm.js's
 * own stylesheet comes with the chunk as text.
 */
import xtermCss from "@xterm/xterm/css/xterm.css" with { type: "text" };

/** Marks the stand-ins, so that only their text is copied. */
const STAND_IN = "data-terminal-css";

const isStandIn = (node: Node | null) => node instanceof HTMLTemplateElement && node.hasAttribute(STAND_IN);

let terminalsOpen = 0;

/**
 * Until the returned function is called (by the last terminal open), `document.createElement("style")` answers a
 * stand-in: xterm.js makes its <style> elements through it when a terminal opens and when its cells are first measured,
 * and uses only their text, appending and removing them. No other part of the dashboard makes a <style> (the policy
 * would refuse it).
 */
function standInForStyles(): () => void {
  if (terminalsOpen++ === 0) {
    const create = Document.prototype.createElement;
    document.createElement = function (this: Document, tag: string, options?: ElementCreationOptions) {
      if (tag.toLowerCase() !== "style") return create.call(this, tag, options);
      const standIn = create.call(this, "template");
      standIn.setAttribute(STAND_IN, "");
      return standIn;
    } as typeof document.createElement;
  }
  return () => {
    // The document's own property goes, and with it the stand-ins: the prototype's method answers again.
    if (--terminalsOpen === 0) Reflect.deleteProperty(document, "createElement");
  };
}

/** Applies xterm.js's styles for the terminal about to open in `container`, until the returned function is called. */
export function adoptTerminalStyles(container: HTMLElement): () => void {
  const restoreStyles = standInForStyles();
  const base = new CSSStyleSheet();
  base.replaceSync(xtermCss as string);
  const copied = new CSSStyleSheet();
  const copy = () => copied.replaceSync([...container.querySelectorAll(`template[${STAND_IN}]`)].map((s) => s.textContent).join("\n"));
  // Rows change on every frame of output; only changes to the stand-ins are copied.
  const observer = new MutationObserver((records) => {
    if (records.some((r) => isStandIn(r.target) || isStandIn(r.target.parentNode) || [...r.addedNodes, ...r.removedNodes].some(isStandIn))) copy();
  });
  observer.observe(container, { childList: true, subtree: true, characterData: true });
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, base, copied];
  return () => {
    observer.disconnect();
    restoreStyles();
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== base && s !== copied);
  };
}
