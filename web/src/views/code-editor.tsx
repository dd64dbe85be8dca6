/**
 * A file's text in CodeMirror 6, with the language its name says (loaded on demand from @codemirror/language-data);
 * loaded only when a file is opened. `onChange` hears every edit; read-only files cannot be edited.
 *
 * CodeMirror writes its styles into a <style> element of the document, which the dashboard's Content-Security-Policy
 * refuses; inside a shadow root it adopts constructed stylesheets instead, which the policy allows: so it lives in one.
 *
 * The editor is put together from CodeMirror's own packages (the `codemirror` package's `basicSetup` is the same
 * pieces): the `codemirror` release installed, 6.65.7, is CodeMirror 5 published under a 6.x number.
 */
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { bracketMatching, defaultHighlightStyle, foldGutter, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { languages } from "@codemirror/language-data";
import { Compartment, EditorState } from "@codemirror/state";
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from "@codemirror/view";

/** What the `codemirror` package's basicSetup gives, of what is installed. */
const basicSetup = [
  lineNumbers(),
  highlightActiveLineGutter(),
  foldGutter(),
  history(),
  drawSelection(),
  indentOnInput(),
  syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
  bracketMatching(),
  highlightActiveLine(),
  keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
];
import { useEffect, useRef } from "preact/hooks";

/** The language of a file, by its name or extension, as language-data describes them. */
const languageOf = (name: string) => {
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
  return languages.find((l) => l.filename?.test(name)) ?? languages.find((l) => ext !== "" && l.extensions.includes(ext));
};

/** The page's stylesheet does not reach into the shadow root: the editor's size and font are its own theme. */
const sized = EditorView.theme({
  "&": { maxHeight: "28rem", fontSize: "0.85rem", backgroundColor: "var(--panel)", color: "var(--text)" },
  ".cm-scroller": { overflow: "auto", fontFamily: "ui-monospace, monospace" },
  ".cm-gutters": { backgroundColor: "var(--bg)", color: "var(--muted)", borderRight: "1px solid var(--line)" },
  "&.cm-focused": { outline: "none" },
});

export function CodeEditor(props: { path: string; content: string; readOnly: boolean; onChange: (text: string) => void; onSave: () => void }) {
  const host = useRef<HTMLDivElement>(null);
  const latest = useRef(props);
  latest.current = props;
  useEffect(() => {
    const language = new Compartment();
    const shadow = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: "open" });
    const parent = document.createElement("div");
    shadow.replaceChildren(parent);
    const view = new EditorView({
      root: shadow,
      parent,
      state: EditorState.create({
        doc: props.content,
        extensions: [
          basicSetup,
          sized,
          language.of([]),
          EditorState.readOnly.of(props.readOnly),
          EditorView.editable.of(!props.readOnly),
          EditorView.contentAttributes.of({ "aria-label": `Contents of ${props.path}` }),
          keymap.of([{ key: "Mod-s", preventDefault: true, run: () => (latest.current.onSave(), true) }]),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) latest.current.onChange(u.state.doc.toString());
          }),
        ],
      }),
    });
    const described = languageOf(props.path.split("/").pop() ?? "");
    let gone = false;
    void described?.load().then((support) => {
      if (!gone) view.dispatch({ effects: language.reconfigure(support) });
    });
    if (described) host.current!.dataset.language = described.name;
    return () => {
      gone = true;
      view.destroy();
    };
    // A new file, version or mode is a new editor (the parent keys it).
  }, []);
  return <div class="code-editor" ref={host} />;
}
