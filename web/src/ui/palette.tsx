/**
 * The command palette (Ctrl-K, Cmd-K on a Mac): one field to reach a page, a project, a task (by title or the start
 * of its id), a session or a server. An ARIA 1.2 combobox: the field keeps focus, the arrow keys move the active
 * option (aria-activedescendant), Enter opens it, Escape closes the palette. Loaded on first use, in a chunk of its own.
 */
import { Compass, FolderKanban, ListTodo, Server, SquareTerminal, type IconNode } from "lucide";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { useCanWrite, useMe } from "../me";
import { type ItemKind, type PaletteItem, paletteItems } from "../palette-items";
import { rank } from "../palette-rank";
import { usePaletteSources } from "../palette-sources";
import { navigate, type Route } from "../router";
import { Dialog } from "./dialog";
import { Icon } from "./icon";
import "./palette-styles";

const KINDS: Record<ItemKind, { icon: IconNode; name: string }> = {
  page: { icon: Compass, name: "Page" },
  project: { icon: FolderKanban, name: "Project" },
  task: { icon: ListTodo, name: "Task" },
  session: { icon: SquareTerminal, name: "Session" },
  server: { icon: Server, name: "Server" },
};

const optionId = (item: PaletteItem) => `palette-${item.key.replace(/[^\w-]/g, "-")}`;

export function Palette(props: { route: Route; onClose: () => void }) {
  const me = useMe();
  const canWrite = useCanWrite();
  const projectId = "projectId" in props.route ? props.route.projectId : null;
  const sources = usePaletteSources(projectId);
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const field = useRef<HTMLInputElement>(null);

  const items = useMemo(() => {
    const name = sources.projects.find((p) => p.id === projectId)?.name ?? "this project";
    return paletteItems({ ...sources, admin: me.role === "admin", canWrite, project: projectId ? { id: projectId, name } : undefined });
  }, [sources, me.role, canWrite, projectId]);
  const shown = useMemo(() => rank(items, query), [items, query]);
  const current = shown[Math.min(active, shown.length - 1)];

  // The dialog would focus its first button (Close): the field is where the person types.
  useEffect(() => field.current?.focus(), []);
  useEffect(() => setActive(0), [query]);
  useEffect(() => void (current && document.getElementById(optionId(current))?.scrollIntoView({ block: "nearest" })), [current]);

  const go = (item: PaletteItem | undefined) => {
    if (!item) return;
    props.onClose();
    navigate(item.path);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const move = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 }[e.key];
    if (move && shown.length > 0) {
      e.preventDefault();
      // The arrows wrap around; a page's worth stops at the ends.
      const next = Math.abs(move) === 1 ? (active + move + shown.length) % shown.length : Math.max(0, Math.min(shown.length - 1, active + move));
      setActive(next);
    } else if (e.key === "Enter") {
      e.preventDefault();
      go(current);
    }
  };

  const searched = projectId ? "pages, projects, this project's tasks and sessions, servers" : "pages, projects, servers";
  return (
    <Dialog open title="Go to" onClose={props.onClose} class="palette">
      <input
        ref={field}
        type="text"
        role="combobox"
        aria-label={`Search ${searched}`}
        aria-expanded="true"
        aria-controls="palette-options"
        aria-autocomplete="list"
        aria-activedescendant={current ? optionId(current) : undefined}
        placeholder={projectId ? "Page, project, task title or id, session, server…" : "Page, project or server…"}
        autocomplete="off"
        spellcheck={false}
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
        onKeyDown={onKeyDown}
      />
      <ul id="palette-options" role="listbox" aria-label="Results" class="palette-options">
        {shown.map((item) => (
          <li
            key={item.key}
            id={optionId(item)}
            role="option"
            aria-selected={item === current}
            class="palette-option"
            // Pointing chooses as the arrows do; a click opens (mousedown would take focus from the field).
            onMouseMove={() => item !== current && setActive(shown.indexOf(item))}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => go(item)}
          >
            <Icon icon={KINDS[item.kind].icon} />
            <span class="palette-text">
              <span class="palette-label">{item.label}</span>
              {item.detail && <span class="palette-detail">{item.detail}</span>}
            </span>
            <span class="palette-kind">{KINDS[item.kind].name}</span>
          </li>
        ))}
      </ul>
      <p class="palette-note muted" aria-live="polite">
        {sources.pending > 0
          ? "Reading…"
          : shown.length === 0
            ? `Nothing matches “${query.trim()}”.`
            : sources.failed.length > 0
              ? `The ${sources.failed.join(" and ")} could not be read.`
              : `${shown.length} ${shown.length === 1 ? "result" : "results"} · ↑↓ to choose, Enter to open, Esc to close`}
      </p>
    </Dialog>
  );
}
