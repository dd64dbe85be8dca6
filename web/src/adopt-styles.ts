/**
 * A stylesheet a lazily loaded view brings as text (esbuild puts a split chunk's CSS in a file nothing loads), applied
 * as a constructed stylesheet: the dashboard's Content-Security-Policy refuses inline <style> elements.
 */
export function adoptStyles(css: string): () => void {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  return () => {
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
  };
}
