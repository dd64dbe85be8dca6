/**
 * Styles that libraries of the code health page bring, under the dashboard's Content-Security-Policy (no inline
 * <style> element, as xterm-styles.ts explains): uPlot's stylesheet comes with the chunk as text, and the <style>
 * element mermaid puts inside each diagram's SVG is taken out and applied as a constructed stylesheet.
 */
import uplotCss from "uplot/dist/uPlot.min.css" with { type: "text" };
import { adoptStyles } from "./adopt-styles";

export const adoptChartStyles = () => adoptStyles(uplotCss as string);

/** The SVG mermaid rendered, without its <style> elements, and their text. */
export function splitSvgStyles(svgText: string): { svg: SVGSVGElement; css: string } {
  // Parsed as HTML (its labels hold HTML such as <br>, which is not XML), in an inert template: nothing in it applies or runs yet.
  const template = document.createElement("template");
  template.innerHTML = svgText;
  const svg = template.content.querySelector("svg")!;
  const styles = [...svg.querySelectorAll("style")];
  const css = styles.map((s) => s.textContent ?? "").join("\n");
  styles.forEach((s) => s.remove());
  return { svg, css };
}
