/**
 * The dashboard's keyboard shortcuts, bound once for the whole app: `/` search, `c` new task, `g` then a letter to
 * move, `?` the list of them, and Ctrl-K (Cmd-K on a Mac) the command palette. None fires while the person types (in
 * an input, a text area, a select, something editable, the terminal or the code editor) or with other modifiers held.
 */
import { createKeybindingsHandler, tinykeys } from "tinykeys";
import { PLACES, PROJECT_PLACES, projectPath } from "./places";
import { navigate, type Route } from "./router";

export interface ShortcutActions {
  route: () => Route;
  palette: () => void;
  help: () => void;
  /** Told when `c` is pressed outside a project, where there is nowhere to make a task. */
  noProject: () => void;
}

/** Keys that belong to what has focus: the terminal's and the code editor's own keys (Ctrl-K among them). */
const ownsKeys = (el: Element) => el.closest(".xterm, .cm-editor") !== null;

/** What has focus inside a shadow root (the code editor lives in one, so its keys reach the page as its host's). */
function deepest(el: Element): Element {
  let at = el;
  while (at.shadowRoot?.activeElement) at = at.shadowRoot.activeElement;
  return at;
}

/** Whether a key pressed here is typing rather than a shortcut. */
export function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof Element)) return false;
  const el = deepest(target);
  return el.matches("input, textarea, select") || (el as HTMLElement).isContentEditable || ownsKeys(el);
}

const visible = (el: Element) => el.getClientRects().length > 0;

const projectOf = (route: Route) => ("projectId" in route ? route.projectId : null);

/** Focuses the page's own search field; false when the page has none showing. */
function focusSearch(): boolean {
  const field = [...document.querySelectorAll<HTMLInputElement>("main input[type=search]")].find(visible);
  field?.focus();
  field?.select();
  return field !== undefined;
}

/** The board's "New task" (its dialog) when it is on screen, else the new-task page of the project. */
function newTask(projectId: string) {
  const button = [...document.querySelectorAll<HTMLElement>("[data-shortcut=new-task]")].find(visible);
  if (button) button.click();
  else navigate(`/projects/${projectId}/tasks/new`);
}

/** Binds the shortcuts to the window; returns the function that unbinds them. */
export function bindShortcuts(a: ShortcutActions): () => void {
  const bindings: Record<string, (e: KeyboardEvent) => void> = {};
  let fired = false;
  const bind = (keys: string, act: () => void) => {
    bindings[keys] = (e) => {
      e.preventDefault();
      fired = true;
      act();
    };
  };
  // `[Shift]+`: on some keyboards / is itself typed with Shift; ? always is.
  bind("[Shift]+/", () => focusSearch() || a.palette());
  bind("[Shift]+?", a.help);
  bind("c", () => {
    const projectId = projectOf(a.route());
    projectId ? newTask(projectId) : a.noProject();
  });
  for (const place of PLACES) if (place.letter) bind(`g ${place.letter}`, () => navigate(place.path));
  for (const place of PROJECT_PLACES) {
    if (!place.letter) continue;
    bind(`g ${place.letter}`, () => {
      const projectId = projectOf(a.route());
      if (projectId) navigate(projectPath(projectId, place));
    });
  }
  const handlerOf = () =>
    createKeybindingsHandler(bindings, {
      // Not while typing, nor over a modal dialog (it has its own keys), nor for a key something else already handled.
      ignore: (e) => e.repeat || e.isComposing || e.defaultPrevented || isTyping(e.target) || document.querySelector("dialog[open]") !== null,
    });
  let handler = handlerOf();
  // A sequence that fires leaves the others half-pressed (`g b` leaves `g g` waiting for its second g, so `g l` right
  // after would go to the graph): each shortcut done, the sequences start afresh.
  const onKey = (e: Event) => {
    handler(e);
    if (fired) handler = handlerOf();
    fired = false;
  };
  addEventListener("keydown", onKey);
  const unbindKeys = () => removeEventListener("keydown", onKey);
  // The palette opens from a field too (as in most apps), but not over the terminal's or the editor's own Ctrl-K.
  const unbindPalette = tinykeys(
    window,
    {
      "$mod+k": (e) => {
        e.preventDefault();
        a.palette();
      },
    },
    { ignore: (e) => e.repeat || (e.target instanceof Element && ownsKeys(e.target)) },
  );
  return () => {
    unbindKeys();
    unbindPalette();
  };
}
