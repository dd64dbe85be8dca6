/** Where the dependency graph's nodes and edges go: upstream above downstream, laid out by dagre. */
import { Graph, layout } from "@dagrejs/dagre";
import type { Task } from "../types";

export const NODE_WIDTH = 180;
/** Room for a title on two lines and the status under it. */
export const NODE_HEIGHT = 60;
/** What fits on a line of a node's title (12px, semibold) inside the box, beside the status bar. */
export const TITLE_LINE_CHARS = 24;

export interface Point {
  x: number;
  y: number;
}

/** A dependency as drawn: from the upstream task to the one that depends on it. */
export interface LaidEdge {
  from: string;
  to: string;
  type: Task["dependencies"][number]["dependency_type"];
  contractKey: string | null;
  points: Point[];
  label?: Point;
}

export interface Laid {
  nodes: { task: Task; x: number; y: number }[];
  edges: LaidEdge[];
  width: number;
  height: number;
}

/** An edge's identity: a task depends on another at most once. */
export const edgeKey = (e: { from: string; to: string }) => `${e.from}>${e.to}`;

export function laidOut(tasks: Task[]): Laid {
  // dagre measures an empty graph as -Infinity wide.
  if (tasks.length === 0) return { nodes: [], edges: [], width: 0, height: 0 };
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 56, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(tasks.map((t) => t.id));
  for (const t of tasks) g.setNode(t.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const t of tasks) {
    for (const d of t.dependencies) {
      if (!ids.has(d.depends_on_task_id)) continue;
      const label = d.contract_key ? { width: d.contract_key.length * 7 + 8, height: 16, labelpos: "c" } : {};
      const edge = { from: d.depends_on_task_id, to: t.id };
      g.setEdge(edge.from, edge.to, { ...label, type: d.dependency_type, contractKey: d.contract_key }, edgeKey(edge));
    }
  }
  layout(g);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  return {
    nodes: g.nodes().map((id) => ({ task: byId.get(id)!, x: g.node(id).x, y: g.node(id).y })),
    edges: g.edges().map((e) => {
      const edge = g.edge(e) as Omit<LaidEdge, "from" | "to" | "label"> & Partial<Point>;
      const { type, contractKey, points } = edge;
      return { from: e.v, to: e.w, type, contractKey, points, ...(contractKey ? { label: { x: edge.x!, y: edge.y! } } : {}) };
    }),
    width: g.graph().width ?? 0,
    height: g.graph().height ?? 0,
  };
}

/** What the layout depends on: the tasks and their edges, not their statuses (a status change only recolours). */
export const shapeOf = (tasks: Iterable<Task>) =>
  [...tasks].map((t) => `${t.id}:${t.dependencies.map((d) => `${d.depends_on_task_id}/${d.dependency_type}/${d.contract_key ?? ""}`).join(",")}`).join("|");

export const pathOf = (points: Point[]) => points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
export const short = (text: string, max = 24) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * A node's title on at most `lines` lines of at most `width` characters, broken between words (a word longer than a
 * line is cut); what does not fit ends the last line with "…" (the whole title is the node's tooltip).
 */
export function titleLines(title: string, width = TITLE_LINE_CHARS, lines = 2): string[] {
  const words = title.trim().split(/\s+/).filter(Boolean);
  const out: string[] = [];
  let line = "";
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const joined = line ? `${line} ${word}` : word;
    if (joined.length <= width) {
      line = joined;
      continue;
    }
    if (out.length === lines - 1) return [...out, short(joined, width)];
    if (line) out.push(line);
    line = word;
    // A word longer than a line fills it and goes on to the next.
    while (line.length > width) {
      if (out.length === lines - 1) return [...out, short(line, width)];
      out.push(line.slice(0, width));
      line = line.slice(width);
    }
  }
  return line ? [...out, line] : out;
}
