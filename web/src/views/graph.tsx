/**
 * The dependency graph: tasks as nodes coloured by status, upstream above
 * downstream, laid out by dagre. `blocks` edges are solid, `input` edges are
 * thick and name their contract key, `related` edges are dashed.
 */
import { Graph, layout } from "@dagrejs/dagre";
import { useMemo, useState } from "preact/hooks";
import { useProject } from "../project-store";
import { navigate } from "../router";
import type { Task } from "../types";
import { ProjectTabs } from "./project-tabs";

const NODE_WIDTH = 180;
const NODE_HEIGHT = 44;

interface Laid {
  nodes: { task: Task; x: number; y: number }[];
  edges: { from: string; to: string; type: string; contractKey: string | null; points: { x: number; y: number }[]; label?: { x: number; y: number } }[];
  width: number;
  height: number;
}

function laidOut(tasks: Task[]): Laid {
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 56, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(tasks.map((t) => t.id));
  for (const t of tasks) g.setNode(t.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const t of tasks) {
    for (const d of t.dependencies) {
      if (!ids.has(d.depends_on_task_id)) continue;
      const label = d.contract_key ? { width: d.contract_key.length * 7 + 8, height: 16, labelpos: "c" } : {};
      g.setEdge(d.depends_on_task_id, t.id, { ...label, type: d.dependency_type, contractKey: d.contract_key }, `${d.depends_on_task_id}>${t.id}`);
    }
  }
  layout(g);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  return {
    nodes: g.nodes().map((id) => ({ task: byId.get(id)!, x: g.node(id).x, y: g.node(id).y })),
    edges: g.edges().map((e) => {
      const edge = g.edge(e) as { points: { x: number; y: number }[]; type: string; contractKey: string | null; x?: number; y?: number };
      return { from: e.v, to: e.w, type: edge.type, contractKey: edge.contractKey, points: edge.points, ...(edge.contractKey ? { label: { x: edge.x!, y: edge.y! } } : {}) };
    }),
    width: g.graph().width ?? 0,
    height: g.graph().height ?? 0,
  };
}

const path = (points: { x: number; y: number }[]) => points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
const short = (text: string, max = 24) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export function GraphView({ projectId }: { projectId: string }) {
  const state = useProject(projectId);
  const [scale, setScale] = useState(1);
  // Layout depends on the tasks and their edges, not on every status change: statuses only recolour.
  const shape = [...state.tasks.values()].map((t) => `${t.id}:${t.dependencies.map((d) => d.depends_on_task_id + d.dependency_type).join(",")}`).join("|");
  const graph = useMemo(() => laidOut([...state.tasks.values()]), [shape]);
  const statusOf = (id: string) => state.tasks.get(id)?.status ?? "pending";

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
          <span class="edge-blocks">blocks</span> <span class="edge-input">input (contract)</span> <span class="edge-related">related</span>
        </span>
        <span class="muted">{state.loaded ? `${graph.nodes.length} tasks, ${graph.edges.length} dependencies` : "Loading…"}</span>
      </div>
      <div class="graph" data-loaded={state.loaded ? "true" : "false"}>
        <svg width={graph.width * scale} height={graph.height * scale} viewBox={`0 0 ${graph.width} ${graph.height}`} role="group" aria-label="Dependency graph">
          <defs>
            <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse">
              <path d="M0,0 L10,5 L0,10 z" class="arrowhead" />
            </marker>
          </defs>
          {graph.edges.map((e) => (
            <g class={`edge edge-${e.type}`} data-from={e.from} data-to={e.to} key={`${e.from}>${e.to}`}>
              <path d={path(e.points)} marker-end="url(#arrow)" />
              {e.label && (
                <text x={e.label.x} y={e.label.y + 4} text-anchor="middle" class="edge-label">
                  {e.contractKey}
                </text>
              )}
            </g>
          ))}
          {graph.nodes.map(({ task, x, y }) => (
            <a
              key={task.id}
              href={`/projects/${projectId}/tasks/${task.id}`}
              class={`node status-${statusOf(task.id)}`}
              data-task-id={task.id}
              onClick={(e) => {
                // A modified click opens the task elsewhere, as any link does.
                if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                e.preventDefault();
                navigate(`/projects/${projectId}/tasks/${task.id}`);
              }}
            >
              <title>{`${task.title} — ${statusOf(task.id)}`}</title>
              <rect x={x - NODE_WIDTH / 2} y={y - NODE_HEIGHT / 2} width={NODE_WIDTH} height={NODE_HEIGHT} rx="6" />
              <text x={x} y={y - 3} text-anchor="middle" class="node-title">
                {short(task.title)}
              </text>
              <text x={x} y={y + 13} text-anchor="middle" class="node-status">
                {statusOf(task.id).replace("_", " ")}
              </text>
            </a>
          ))}
        </svg>
      </div>
    </section>
  );
}
