/**
 * A task's markdown spec, rendered as elements rather than as HTML: the spec's text only ever becomes text nodes, so
 * nothing in it (a tag, a script, an event handler) can reach the page, and links go only to web, mail or
 * same-site addresses. Covers what specs use: headings, paragraphs, lists (nested), quotes, fenced code, rules,
 * and inline code, bold, italics and links.
 */
import type { ComponentChildren, VNode } from "preact";

const FENCE = /^\s*(```|~~~)/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s*>\s?/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;

/** Where a link may go: http(s), mail, or this site (a path or an anchor, not `//elsewhere`). */
const safeHref = (url: string) => (/^(https?:|mailto:)/i.test(url) || /^(\/(?!\/)|#)/.test(url) ? url : null);

const INLINE =
  /`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)|\*\*(.+?)\*\*|(?<!\w)__(.+?)__(?!\w)|\*([^*\s](?:[^*]*[^*\s])?)\*|(?<!\w)_([^_\s](?:[^_]*[^_\s])?)_(?!\w)|(https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"])/g;

function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    last = m.index + m[0].length;
    const [, code, label, url, strong, strong2, em, em2, bare] = m;
    if (code !== undefined) out.push(<code>{code}</code>);
    else if (label !== undefined) {
      const href = safeHref(url!);
      out.push(
        href ? (
          <a href={href} rel="noopener noreferrer">
            {inline(label)}
          </a>
        ) : (
          inline(label)
        ),
      );
    } else if (strong !== undefined || strong2 !== undefined) out.push(<strong>{inline((strong ?? strong2)!)}</strong>);
    else if (em !== undefined || em2 !== undefined) out.push(<em>{inline((em ?? em2)!)}</em>);
    else
      out.push(
        <a href={bare} rel="noopener noreferrer">
          {bare}
        </a>,
      );
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Whether a line begins a block other than a paragraph (and so ends the paragraph before it). */
const startsBlock = (line: string) => FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);

function blocks(lines: string[]): VNode[] {
  const out: VNode[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.trim()) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trim().startsWith(fence[1]!); i++) body.push(lines[i]!);
      i++;
      out.push(
        <pre class="code">
          <code>{body.join("\n")}</code>
        </pre>,
      );
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      // The page's own headings come first: a spec's `#` is a section of the task, below them.
      const Tag = `h${Math.min(heading[1]!.length + 3, 6)}` as "h4";
      out.push(<Tag>{inline(heading[2]!)}</Tag>);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push(<hr />);
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const quoted: string[] = [];
      for (; i < lines.length && QUOTE.test(lines[i]!); i++) quoted.push(lines[i]!.replace(QUOTE, ""));
      out.push(<blockquote>{blocks(quoted)}</blockquote>);
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      const ordered = /\d/.test(item[2]!);
      const indent = item[1]!.length;
      const items: string[][] = [];
      while (i < lines.length) {
        const next = ITEM.exec(lines[i]!);
        if (next && next[1]!.length <= indent) {
          if (/\d/.test(next[2]!) !== ordered) break;
          items.push([next[3]!]);
          i++;
        } else if (lines[i]!.trim() && (lines[i]!.length - lines[i]!.trimStart().length > indent || !startsBlock(lines[i]!))) {
          // A deeper line (or a lazy continuation) belongs to the item above.
          items[items.length - 1]!.push(lines[i]!.slice(Math.min(indent + 2, lines[i]!.length - lines[i]!.trimStart().length)));
          i++;
        } else if (!lines[i]!.trim() && i + 1 < lines.length && lines[i + 1]!.length - lines[i + 1]!.trimStart().length > indent) i++;
        else break;
      }
      const children = items.map((content) => <li>{content.length === 1 ? inline(content[0]!) : blocks(content)}</li>);
      out.push(ordered ? <ol>{children}</ol> : <ul>{children}</ul>);
      continue;
    }
    const paragraph: string[] = [];
    for (; i < lines.length && lines[i]!.trim() && (paragraph.length === 0 || !startsBlock(lines[i]!)); i++) paragraph.push(lines[i]!.trim());
    out.push(<p>{inline(paragraph.join(" "))}</p>);
  }
  return out;
}

export function Markdown({ source }: { source: string }) {
  return <div class="markdown">{blocks(source.replace(/\r\n?/g, "\n").split("\n"))}</div>;
}
