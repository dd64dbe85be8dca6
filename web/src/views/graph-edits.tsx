/**
 * Changing the graph's dependencies: the dialog a drag ends in, the list of every dependency (with Remove for those
 * who may write, reachable by keyboard), and a form to add one without dragging (phones, keyboards).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { Task } from "../types";
import { Problem } from "./controls";
import { addDependency, DependencyFields, NO_CHOICE, refusalOf, removeDependency, type DependencyChoice, type DependencyType } from "./dependency-fields";
import { edgeKey } from "./graph-layout";
import { linkProps } from "../router";
import { saveAsTemplatePath } from "./save-as-template";

/** A dependency of the project: `to` depends on `from`. */
export interface Dependency {
  from: string;
  to: string;
  type: DependencyType;
  contractKey: string | null;
  resolved: boolean;
}

export const dependenciesOf = (tasks: Map<string, Task>): Dependency[] =>
  [...tasks.values()].flatMap((t) =>
    t.dependencies
      .filter((d) => tasks.has(d.depends_on_task_id))
      .map((d) => ({ from: d.depends_on_task_id, to: t.id, type: d.dependency_type, contractKey: d.contract_key, resolved: d.resolved })),
  );

/** Dependencies in a steady order to read: by the waiting task's title, then by the title of what it waits for. */
export const inReadingOrder = (tasks: Map<string, Task>, deps: Dependency[]) => {
  const title = titleIn(tasks);
  return deps.toSorted((a, b) => title(a.to).localeCompare(title(b.to)) || title(a.from).localeCompare(title(b.from)));
};

/** A task's title as the graph names it; a task not (yet) read is named by the start of its id. */
export const titleIn = (tasks: Map<string, Task>) => (id: string) => tasks.get(id)?.title ?? id.slice(0, 8);

/** What adding takes from the page: the project's tasks and where to say it was added. */
interface Adding {
  tasks: Map<string, Task>;
  onAdded: (d: { from: string; to: string }) => void;
}

/** Sends a new dependency; the refusal, if any, in the hub's words with tasks named by title. */
function useAdd({ tasks, onAdded }: Adding) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const add = async (from: string, to: string, choice: DependencyChoice) => {
    setBusy(true);
    setError(null);
    try {
      await addDependency(to, from, choice);
      onAdded({ from, to });
      return true;
    } catch (e) {
      setError(refusalOf(e, (id) => tasks.get(id)?.title));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { add, busy, error, clearError: () => setError(null) };
}

/** Asked when a drag from `from` ends over `to`: the type and contract key of the dependency `to` gets on `from`. */
export function ConnectDialog(props: Adding & { from: string; to: string; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [choice, setChoice] = useState(NO_CHOICE);
  const { add, busy, error } = useAdd(props);
  const title = titleIn(props.tasks);
  useEffect(() => {
    dialog.current?.showModal();
    return () => dialog.current?.close();
  }, []);
  return (
    <dialog ref={dialog} class="connect-dialog" aria-labelledby="connect-title" onClose={props.onClose}>
      <form
        method="dialog"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await add(props.from, props.to, choice)) props.onClose();
        }}
      >
        <h2 id="connect-title">Add a dependency</h2>
        <p>
          <strong>{title(props.to)}</strong> will depend on <strong>{title(props.from)}</strong>.
        </p>
        <DependencyFields value={choice} onChange={setChoice} idPrefix="connect" />
        <Problem message={error} />
        <div class="dialog-buttons">
          <button type="submit" disabled={busy}>
            Add dependency
          </button>
          <button type="button" class="link" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** The same as a drag, as a form: which task depends on which, with the type and contract key. */
export function AddDependencyForm(props: Adding) {
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [choice, setChoice] = useState(NO_CHOICE);
  const { add, busy, error } = useAdd(props);
  const options = [...props.tasks.values()].sort((a, b) => a.title.localeCompare(b.title));
  const picker = (label: string, value: string, set: (id: string) => void, name: string) => (
    <label>
      {label}
      <select name={name} value={value} required onChange={(e) => set(e.currentTarget.value)}>
        <option value="">Choose a task…</option>
        {options.map((t) => (
          <option key={t.id} value={t.id}>
            {`${t.title} (${t.status.replace("_", " ")})`}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section class="add-dependency" aria-labelledby="add-dependency-title">
      <h2 id="add-dependency-title">Add dependency</h2>
      <p class="muted">Or drag from one task to another on the graph. Only a pending task's dependencies can change.</p>
      <form
        class="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await add(from, to, choice)) {
            setFrom("");
            setTo("");
            setChoice(NO_CHOICE);
          }
        }}
      >
        {picker("Task", to, setTo, "task")}
        {picker("Depends on", from, setFrom, "depends_on")}
        <DependencyFields value={choice} onChange={setChoice} idPrefix="add-form" />
        <button type="submit" disabled={busy}>
          Add dependency
        </button>
      </form>
      <Problem message={error} />
    </section>
  );
}

/** Removes dependencies; a refusal is kept beside the one it was about. */
function useRemove(tasks: Map<string, Task>, onRemoved: (key: string) => void) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<{ key: string; message: string } | null>(null);
  const remove = async (d: Dependency) => {
    const key = edgeKey(d);
    setBusy(key);
    setError(null);
    try {
      await removeDependency(d.to, d.from);
      onRemoved(key);
    } catch (e) {
      setError({ key, message: refusalOf(e, (id) => tasks.get(id)?.title) });
    } finally {
      setBusy(null);
    }
  };
  return { remove, busy, errorOf: (key: string) => (error?.key === key ? error.message : null) };
}

/** What a dependency is, in words: which task depends on which, how, and whether it holds the task back still. */
function Described({ d, title }: { d: Dependency; title: (id: string) => string }) {
  return (
    <>
      <strong>{title(d.to)}</strong> depends on <strong>{title(d.from)}</strong> <span class={`badge dependency-${d.type}`}>{d.type}</span>
      {d.contractKey && <code class="contract-key">{d.contractKey}</code>}
      <span class="muted"> {d.resolved ? "resolved" : "waiting"}</span>
    </>
  );
}

interface Listing {
  tasks: Map<string, Task>;
  canWrite: boolean;
  onSelect: (key: string | null) => void;
}

/** The dependency picked on the graph, above it: what it is, and Remove for those who may write. */
export function SelectedDependency(props: Listing & { dependency: Dependency }) {
  const { remove, busy, errorOf } = useRemove(props.tasks, () => props.onSelect(null));
  const d = props.dependency;
  const title = titleIn(props.tasks);
  return (
    <div class="selected-dependency" role="region" aria-label="Selected dependency">
      <span>
        <Described d={d} title={title} />
      </span>
      {props.canWrite && (
        <button type="button" class="danger" disabled={busy !== null} onClick={() => void remove(d)}>
          Remove
        </button>
      )}
      {props.canWrite && props.tasks.get(d.to) && <a {...linkProps(saveAsTemplatePath(props.tasks.get(d.to)!))}>Save its graph as a template</a>}
      <button type="button" class="link" onClick={() => props.onSelect(null)}>
        Deselect
      </button>
      <Problem message={errorOf(edgeKey(d))} />
    </div>
  );
}

/** Every dependency of the project, the selected one marked; those who may write remove them here. */
export function DependencyList(props: Listing & { dependencies: Dependency[]; selected: string | null }) {
  const { remove, busy, errorOf } = useRemove(props.tasks, (key) => props.selected === key && props.onSelect(null));
  const title = titleIn(props.tasks);
  return (
    <section class="dependency-list" aria-labelledby="dependency-list-title">
      <h2 id="dependency-list-title">Dependencies</h2>
      {props.dependencies.length === 0 ? (
        <p class="muted">No task depends on another yet.</p>
      ) : (
        <ul>
          {props.dependencies.map((d) => {
            const key = edgeKey(d);
            return (
              <li key={key} data-edge={key} class={props.selected === key ? "selected" : undefined}>
                <button
                  type="button"
                  class="link dependency-text"
                  aria-pressed={props.selected === key}
                  onClick={() => props.onSelect(props.selected === key ? null : key)}
                >
                  <Described d={d} title={title} />
                </button>
                {props.canWrite && (
                  <button
                    type="button"
                    class="danger"
                    disabled={busy !== null}
                    aria-label={`Remove: ${title(d.to)} depends on ${title(d.from)}`}
                    onClick={() => void remove(d)}
                  >
                    Remove
                  </button>
                )}
                <Problem message={errorOf(key)} />
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
