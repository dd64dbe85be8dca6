/** The `?` list: every shortcut, the project's only where there is a project to go to. Loaded when first shown. */
import { Fragment } from "preact";
import { PLACES, PROJECT_PLACES } from "../places";
import { Dialog } from "./dialog";
import "./palette-styles";

/** Keys pressed one after the other, and what they do. */
const SHORTCUTS: { keys: string[]; what: string; inProject?: boolean }[] = [
  { keys: ["Ctrl K"], what: "Open the command palette" },
  { keys: ["/"], what: "Search this page (the palette where a page has no search)" },
  { keys: ["c"], what: "New task in this project", inProject: true },
  ...PLACES.filter((p) => p.letter).map((p) => ({ keys: ["g", p.letter!], what: `Go to ${p.label.toLowerCase()}` })),
  ...PROJECT_PLACES.filter((p) => p.letter).map((p) => ({ keys: ["g", p.letter!], what: `Go to the project's ${p.label.toLowerCase()}`, inProject: true })),
  { keys: ["?"], what: "Show these shortcuts" },
  { keys: ["Esc"], what: "Close a dialog, the palette or the menu" },
];

export function ShortcutList(props: { inProject: boolean; modifier: string; onClose: () => void }) {
  return (
    <Dialog open title="Keyboard shortcuts" onClose={props.onClose} class="shortcut-list">
      <table class="data shortcuts">
        <tbody>
          {SHORTCUTS.filter((s) => props.inProject || !s.inProject).map((s) => (
            <tr key={s.keys.join(" ")}>
              <th scope="row">
                {s.keys.map((k, i) => (
                  <Fragment key={i}>
                    {i > 0 && <span class="then"> then </span>}
                    <kbd>{k.replace("Ctrl", props.modifier)}</kbd>
                  </Fragment>
                ))}
              </th>
              <td>{s.what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!props.inProject && <p class="muted">In a project, c makes a task there and g then a letter goes to its pages (b board, l list, s sessions…).</p>}
    </Dialog>
  );
}
