/** A task's markdown spec: its source as plain text until the renderer (markdown-html.ts) has loaded, then sanitised HTML. */
import { useEffect, useState } from "preact/hooks";

type Render = (source: string) => string;
let loading: Promise<Render> | null = null;
const loadRenderer = () => (loading ??= import("./markdown-html").then((m) => m.renderMarkdown));

export function Markdown({ source }: { source: string }) {
  const [render, setRender] = useState<Render | null>(null);
  useEffect(() => {
    let live = true;
    void loadRenderer().then((r) => live && setRender(() => r));
    return () => {
      live = false;
    };
  }, []);
  if (!render) return <div class="markdown loading">{source}</div>;
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: render(source) }} />;
}
