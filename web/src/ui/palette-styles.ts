/**
 * The palette's and the shortcut list's styles, applied once when either first loads (as a constructed stylesheet:
 * the page's Content-Security-Policy refuses inline <style>), so the first load does not carry them.
 */
import css from "./palette.css" with { type: "text" };

const sheet = new CSSStyleSheet();
sheet.replaceSync(css as string);
document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
