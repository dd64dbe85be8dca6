/**
 * The dependency graph: tasks as nodes coloured by status (a blocked one says so), upstream above downstream, laid
 * out by dagre. `blocks` edges are solid, `input` edges are thick and name their contract key, `related` edges are
 * dashed. Those who may write drag from one task to another to add a dependency, pick an edge to remove it, or use
 * the list and form under the graph; viewers see the graph and the list only.
 */
import { useMemo, useRef, useState } from "preact/hooks";
import { useCanWrite } from "../me";
import { useProject } from "../project-store";
import { navigate } from "../router";
import type { Task } from "../types";
import { AddDependencyForm, ConnectDialog, DependencyList, SelectedDependency, dependenciesOf, inReadingOrder } from "./graph-edits";
import { useDragToConnect } from "./graph-drag";
import { edgeKey, laidOut, NODE_HEIGHT, NODE_WIDTH, pathOf, shapeOf, titleLines, type LaidEdge } from "./graph-layout";
import { ProjectTabs } from "./project-tabs";
import { addUsage, compact, hasUsage, noUsage, usd } from "../usage-format";
import { usageTitle } from "./usage-badge";
import { Empty } from "../ui/states";

/** Line height of a node's title, and where its lines and the status go (from the node's centre) for one or two lines. */
const TITLE_LINE = 14;
const TITLE_TOP = { 1: -3, 2: -10 } as const;

export function GraphView({ projectId }: { projectId: string }) {
  const state = useProject(projectId);
  const canWrite = useCanWrite();
  const [scale, setScale] = useState(1);
  const [selected, setSelected] = useState<string | null>(null);
  const [connecting, setConnecting] = useState<{ from: string; to: string } | null>(null);
  const svg = useRef<SVGSVGElement>(null);
  const graph = useMemo(() => laidOut([...state.tasks.values()]), [shapeOf(state.tasks.values())]);
  const dependencies = useMemo(() => inReadingOrder(state.tasks, dependenciesOf(state.tasks)), [state.tasks]);
  const { line, onNodePointerDown, endedDrag } = useDragToConnect(svg, canWrite, (from, to) => setConnecting({ from, to }));
  const task = (id: string): Task | undefined => state.tasks.get(id);
  const picked = dependencies.find((d) => edgeKey(d) === selected);
  // What every task drawn here used, together: kept live as usage batches arrive.
  const total = useMemo(() => [...state.tasks.values()].reduce((sum, t) => (t.usage ? addUsage(sum, t.usage) : sum), noUsage()), [state.tasks]);

  return (
    <section class="graph-page">
      <ProjectTabs projectId={projectId} name={state.project?.name} current="graph" status={state.status} />
      <div class="graph-tools">
        <button type="button" onClick={() => setScale((s) => Math.max(0.2, s / 1.25))} aria-label="Zoom out">
          −
        </button>
        <button type="button" onClick={() => setScale(1)}>
          100 %
        </button>
        <button type="button" onClick={() => setScale((s) => Math.min(3, s * 1.25))} aria-label="Zoom in">
          +
        </button>
        <span class="legend">
          <span class="edge-blocks">blocks</span> <span class="edge-input">input (contract)</span> <span class="edge-related">related</span>{" "}
          <span class="badge blocked">blocked</span>
        </span>
        <span class="muted">{state.loaded ? `${graph.nodes.length} tasks, ${graph.edges.length} dependencies` : "Loading…"}</span>
        {hasUsage(total) && (
          <span class="graph-usage" data-cost={total.cost_usd} title={usageTitle(total)}>
            Total: <strong>{compact(total)}</strong>
          </span>
        )}
      </div>
      {canWrite && state.loaded && graph.nodes.length > 1 && (
        <p class="muted graph-hint">
          Drag from a task to the task that should wait for it to add a dependency (or use the form below); pick an arrow to remove one.
        </p>
      )}
      {picked && <SelectedDependency tasks={state.tasks} dependency={picked} canWrite={canWrite} onSelect={setSelected} />}
      {state.loaded && graph.nodes.length === 0 && (
        <Empty title="No tasks to draw yet">Tasks and the dependencies between them show here once the project has some.</Empty>
      )}
      <div
        class={`graph${line ? " connecting" : ""}${canWrite ? " editable" : ""}`}
        data-loaded={state.loaded ? "true" : "false"}
        hidden={state.loaded && graph.nodes.length === 0}
      >
        <svg
          ref={svg}
          width={graph.width * scale}
          height={graph.height * scale}
          viewBox={`0 0 ${graph.width} ${graph.height}`}
          role="group"
          aria-label="Dependency graph"
          onDragStart={(e) => e.preventDefault()}
        >
          <defs>
            <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse">
              <path d="M0,0 L10,5 L0,10 z" class="arrowhead" />
            </marker>
          </defs>
          {graph.edges.map((e) => (
            <Edge key={edgeKey(e)} edge={e} title={(id) => task(id)?.title ?? id} selected={selected === edgeKey(e)} onSelect={setSelected} />
          ))}
          {graph.nodes.map(({ task: t, x, y }) => {
            const status = task(t.id)?.status ?? t.status;
            const blocked = task(t.id)?.blocked ?? t.blocked;
            const usage = task(t.id)?.usage ?? t.usage;
            const title = titleLines(task(t.id)?.title ?? t.title);
            const top = y + TITLE_TOP[title.length === 2 ? 2 : 1];
            const classes = [
              "node",
              `status-${status}`,
              blocked ? "blocked" : "",
              line?.from === t.id ? "drag-source" : "",
              line?.over === t.id ? "drop-target" : "",
            ];
            return (
              <a
                key={t.id}
                href={`/projects/${projectId}/tasks/${t.id}`}
                class={classes.filter(Boolean).join(" ")}
                data-task-id={t.id}
                data-blocked={blocked ? "true" : "false"}
                onPointerDown={(e) => onNodePointerDown(e, t.id, { x, y })}
                onClick={(e) => {
                  // A drag ends without opening the task; a modified click opens it elsewhere, as any link does.
                  if (endedDrag()) return void e.preventDefault();
                  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                  e.preventDefault();
                  navigate(`/projects/${projectId}/tasks/${t.id}`);
                }}
              >
                <title>{`${t.title} — ${status.replace("_", " ")}${blocked ? ", blocked" : ""}${hasUsage(usage) ? `. ${usageTitle(usage)}` : ""}`}</title>
                <rect class="box" x={x - NODE_WIDTH / 2} y={y - NODE_HEIGHT / 2} width={NODE_WIDTH} height={NODE_HEIGHT} rx="6" />
                <line class="status-bar" x1={x - NODE_WIDTH / 2 + 5} y1={y - NODE_HEIGHT / 2 + 6} x2={x - NODE_WIDTH / 2 + 5} y2={y + NODE_HEIGHT / 2 - 6} />
                <text x={x + 3} y={top} text-anchor="middle" class="node-title">
                  {title.map((l, i) => (
                    <tspan key={i} x={x + 3} dy={i === 0 ? 0 : TITLE_LINE}>
                      {l}
                    </tspan>
                  ))}
                </text>
                <text x={x + 3} y={top + title.length * TITLE_LINE + 3} text-anchor="middle" class="node-status">
                  {status.replace("_", " ")}
                  {blocked && <tspan class="node-blocked"> · blocked</tspan>}
                  {usage && usage.cost_usd > 0 && <tspan class="node-cost"> · {usd(usage.cost_usd)}</tspan>}
                </text>
              </a>
            );
          })}
          {line && <line class="drag-line" x1={line.start.x} y1={line.start.y + NODE_HEIGHT / 2} x2={line.end.x} y2={line.end.y} marker-end="url(#arrow)" />}
        </svg>
      </div>
      {connecting && (
        <ConnectDialog tasks={state.tasks} from={connecting.from} to={connecting.to} onAdded={() => setSelected(null)} onClose={() => setConnecting(null)} />
      )}
      <DependencyList tasks={state.tasks} dependencies={dependencies} selected={selected} onSelect={setSelected} canWrite={canWrite} />
      {canWrite && state.loaded && <AddDependencyForm tasks={state.tasks} onAdded={() => setSelected(null)} />}
    </section>
  );
}

/** One dependency on the graph: a wide invisible stroke makes it easy to pick; Enter or Space picks it from the keyboard. */
function Edge(props: { edge: LaidEdge; title: (id: string) => string; selected: boolean; onSelect: (key: string | null) => void }) {
  const e = props.edge;
  const key = edgeKey(e);
  const pick = () => props.onSelect(props.selected ? null : key);
  const name = `${props.title(e.to)} depends on ${props.title(e.from)}: ${e.type}${e.contractKey ? ` (${e.contractKey})` : ""}`;
  return (
    <g
      class={`edge edge-${e.type}${props.selected ? " selected" : ""}`}
      data-from={e.from}
      data-to={e.to}
      tabIndex={0}
      role="button"
      aria-pressed={props.selected}
      aria-label={name}
      onClick={pick}
      onKeyDown={(k) => {
        if (k.key !== "Enter" && k.key !== " ") return;
        k.preventDefault();
        pick();
      }}
    >
      <path class="edge-hit" d={pathOf(e.points)} />
      <path class="edge-line" d={pathOf(e.points)} marker-end="url(#arrow)" />
      {e.label && (
        <text x={e.label.x} y={e.label.y + 4} text-anchor="middle" class="edge-label">
          {e.contractKey}
        </text>
      )}
    </g>
  );
}
