/**
 * A task's markdown spec as HTML (loaded when a spec is first shown, so the first page stays small): CommonMark and GFM by `marked`, then sanitised by DOMPurify before it reaches the
 * page. HTML written in a spec is shown as text, never parsed (a spec is an agent's or a person's prose, not a page),
 * images become links (the dashboard loads nothing from elsewhere), and links keep only safe schemes.
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    image: ({ href, text }) => `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`,
  },
});

const purify = DOMPurify();
purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") node.setAttribute("rel", "noopener noreferrer");
});

/** The spec's HTML, safe to set as a subtree's content. */
export function renderMarkdown(source: string): string {
  const html = marked.parse(source) as string;
  return purify.sanitize(html, { FORBID_TAGS: ["img", "style", "form", "input", "button", "iframe"], FORBID_ATTR: ["style"] });
}
