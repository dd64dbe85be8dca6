/**
 * xterm.js's styles under the dashboard's Content-Security-Policy, which
 * allows inline style attributes (xterm.js colours 24-bit cells with them) but
 * no inline <style> element: xterm.js writes its theme and sizes into <style>
 * elements inside the terminal, which the browser refuses (with a console
 * warning each time the terminal opens or resizes), so their text is copied
 * into a constructed stylesheet, which the policy allows. xterm.js's own
 * stylesheet comes with the chunk as text.
 */
import xtermCss from "@xterm/xterm/css/xterm.css" with { type: "text" };

const isStyle = (node: Node | null) => node?.nodeName === "STYLE";

/** Applies xterm.js's styles for the terminal about to open in `container`, until the returned function is called. */
export function adoptTerminalStyles(container: HTMLElement): () => void {
  const base = new CSSStyleSheet();
  base.replaceSync(xtermCss as string);
  const copied = new CSSStyleSheet();
  const copy = () => copied.replaceSync([...container.querySelectorAll("style")].map((s) => s.textContent).join("\n"));
  // Rows change on every frame of output; only changes to the style elements are copied.
  const observer = new MutationObserver((records) => {
    if (records.some((r) => isStyle(r.target) || isStyle(r.target.parentNode) || [...r.addedNodes].some(isStyle))) copy();
  });
  observer.observe(container, { childList: true, subtree: true, characterData: true });
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, base, copied];
  return () => {
    observer.disconnect();
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== base && s !== copied);
  };
}
