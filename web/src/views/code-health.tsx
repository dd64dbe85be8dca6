/**
 * A project's code health, from the snapshots its servers' daemons made (`orchestratia code scan`, or "Scan now" on a
 * running session): the score over time (uPlot), the latest scan's factors, tech debt and hotspots, and its module
 * graph, drawn from the snapshot's Mermaid text by mermaid, which loads only once a graph is to be drawn. A new scan
 * (`code_health_scanned`) reads the page again.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { hub, messageOf, ok } from "../api";
import { adoptChartStyles, splitSvgStyles } from "../chart-styles";
import { adoptStyles } from "../adopt-styles";
import { useCanWrite } from "../me";
import { useProjectFeed, useReread } from "../project-feed";
import type { HubEvent, CodeHealth as Latest, ProjectCodeHealth, Session } from "../types";
import { timeRange } from "./score-range";
import { Problem } from "./controls";
import { ProjectTabs } from "./project-tabs";
import { absoluteTime } from "../time-format";

const SCANNED: ReadonlySet<string> = new Set(["code_health_scanned"]);
const when = (iso: string) => absoluteTime(iso);

export function CodeHealth({ projectId }: { projectId: string }) {
  const feed = useProjectFeed(projectId, SCANNED);
  const [health, setHealth] = useState<ProjectCodeHealth | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reread = useReread(
    () => ok(hub.GET("/api/v1/projects/{id}/code-health", { params: { path: { id: projectId } } })),
    (h) => {
      setHealth(h);
      setError(null);
    },
    setError,
  );
  useEffect(() => reread(0), [projectId]);
  useEffect(() => {
    if (feed.latest.length > 0) reread();
  }, [feed.latest]);

  const latest = health?.latest ?? null;
  return (
    <section class="code-health-page">
      <ProjectTabs projectId={projectId} name={feed.project?.name} current="code-health" status={feed.status} />
      <Problem message={error ?? feed.error} />
      <ScanNow projectId={projectId} scans={feed.latest} />
      {health === null ? (
        <p class="loading">Loading code health…</p>
      ) : latest === null ? (
        <p class="muted empty">
          No scan yet. Scan a running session's working directory above, or run <code>orchestratia code scan</code> in one.
        </p>
      ) : (
        <div class="code-health" data-loaded="true">
          <Summary latest={latest} />
          <h2>Score over time</h2>
          <ScoreChart history={health.history} />
          <div class="health-columns">
            <Factors latest={latest} />
            <Hotspots latest={latest} />
          </div>
          <TechDebt latest={latest} />
          <h2>Module graph</h2>
          {latest.mermaid_graph ? <ModuleGraph text={latest.mermaid_graph} /> : <p class="muted">This scan drew no module graph.</p>}
        </div>
      )}
    </section>
  );
}

function Summary({ latest }: { latest: Latest }) {
  const grade = latest.health_score >= 70 ? "good" : latest.health_score >= 50 ? "fair" : "poor";
  return (
    <div class="health-summary">
      <span class={`health-score health-${grade}`} data-score={latest.health_score}>
        {latest.health_score}
        <small>/100 · {latest.health_grade}</small>
      </span>
      <dl>
        <dt>Files</dt>
        <dd>
          {latest.total_files} ({latest.analyzed_files} analysed)
        </dd>
        <dt>Lines</dt>
        <dd>{latest.total_lines}</dd>
        <dt>Tech debt</dt>
        <dd>{latest.tech_debt_total_hours} h</dd>
        <dt>Scanned</dt>
        <dd>
          {when(latest.scanned_at)}
          {latest.git_branch && ` · ${latest.git_branch}`}
          {latest.git_commit && ` @ ${latest.git_commit.slice(0, 8)}`}
          {latest.triggered_by && ` · ${latest.triggered_by.replace("_", " ")}`}
        </dd>
      </dl>
    </div>
  );
}

function ScoreChart({ history }: { history: ProjectCodeHealth["history"] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const unstyle = adoptChartStyles();
    // By the scanner's clock: a scan sent late (a daemon that was away) still falls where it was made.
    const points = [...history].sort((a, b) => a.scanned_at.localeCompare(b.scanned_at));
    const data: uPlot.AlignedData = [points.map((p) => Date.parse(p.scanned_at) / 1000), points.map((p) => p.health_score)];
    // From the scans themselves: uPlot widens a single instant on its own before a range function sees it.
    const span = timeRange(data[0][0]!, data[0][data[0].length - 1]!);
    const plot = new uPlot(
      {
        width: Math.max(320, el.clientWidth),
        height: 220,
        // One scan alone would make the time axis a single instant: the day around it is shown instead.
        scales: { x: { time: true, range: () => span }, y: { range: [0, 100] } },
        legend: { show: false },
        axes: [{}, { label: "score" }],
        series: [{}, { label: "Health score", stroke: "#2a9d88", width: 2, fill: "rgba(42, 157, 136, 0.12)", points: { show: true, size: 7 } }],
        // The axis as drawn, for whoever checks the chart's range (a canvas says nothing of it); uPlot sets its scales
        // when it first draws, not when it is made.
        hooks: {
          draw: [
            (u) => {
              el.dataset.from = String(u.scales.x!.min);
              el.dataset.to = String(u.scales.x!.max);
            },
          ],
        },
      },
      data,
      el,
    );
    return () => {
      plot.destroy();
      unstyle();
    };
  }, [history]);
  return <div class="score-chart" ref={box} role="img" aria-label={`Health score of ${history.length} scans, oldest first`} data-points={history.length} />;
}

function Factors({ latest }: { latest: Latest }) {
  return (
    <div>
      <h2>Factors</h2>
      <table class="factors">
        <tbody>
          {Object.entries(latest.factors).map(([name, f]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td class="num">{f.score}/100</td>
              <td>{f.details}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Hotspots({ latest }: { latest: Latest }) {
  return (
    <div>
      <h2>Hotspots</h2>
      {latest.hotspots.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ol class="hotspots">
          {latest.hotspots.map((h) => (
            <li key={h}>
              <code>{h}</code>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

function TechDebt({ latest }: { latest: Latest }) {
  return (
    <div>
      <h2>Tech debt: {latest.tech_debt_total_hours} h</h2>
      {latest.tech_debt_top_files.length === 0 ? (
        <p class="muted">No significant tech debt.</p>
      ) : (
        <table class="tech-debt">
          <thead>
            <tr>
              <th>File</th>
              <th class="num">Hours</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {latest.tech_debt_top_files.map((f) => (
              <tr key={f.path}>
                <td>
                  <code>{f.path}</code>
                </td>
                <td class="num">{f.hours}</td>
                <td>{f.reasons.join(", ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

let graphs = 0;

/** The module graph: mermaid (a large library) is imported the first time a graph is drawn. */
function ModuleGraph({ text }: { text: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    let unstyle = () => {};
    setFailed(null);
    void import("mermaid")
      .then(async ({ default: mermaid }) => {
        mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "neutral" });
        const { svg } = await mermaid.render(`module-graph-${++graphs}`, text);
        if (!live || !box.current) return;
        const split = splitSvgStyles(svg);
        unstyle = adoptStyles(split.css);
        box.current.replaceChildren(split.svg);
        box.current.dataset.rendered = "true";
      })
      .catch((e: unknown) => live && setFailed(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
      unstyle();
    };
  }, [text]);
  return (
    <>
      {failed && <Problem message={`The module graph could not be drawn: ${failed}`} />}
      {/* It scrolls when the graph is larger than its box: focusable, so the keyboard can scroll it too. */}
      <div class="module-graph" ref={box} aria-label="Module graph" role="img" tabIndex={0}>
        {!failed && <p class="loading">Drawing the module graph…</p>}
      </div>
    </>
  );
}

/**
 * "Scan now": asks a running session's daemon to scan its working directory (writers only). The notice that a scan
 * was asked for stays until that session's scan lands (`scans`, the feed's latest `code_health_scanned` events).
 */
function ScanNow({ projectId, scans }: { projectId: string; scans: HubEvent[] }) {
  const canWrite = useCanWrite();
  const [sessions, setSessions] = useState<Session[]>([]);
  const [chosen, setChosen] = useState("");
  const [state, setState] = useState<
    { kind: "idle" } | { kind: "asked"; name: string; sessionId: string; after: number } | { kind: "failed"; message: string }
  >({
    kind: "idle",
  });
  // The scan may land before the request that asked for it is answered: whichever comes second clears the notice.
  useEffect(() => {
    if (state.kind === "asked" && scans.some((e) => e.data.session_id === state.sessionId && e.seq > state.after)) setState({ kind: "idle" });
  }, [scans, state]);
  useEffect(() => {
    if (!canWrite) return;
    let live = true;
    void ok(hub.GET("/api/v1/projects/{id}/sessions", { params: { path: { id: projectId }, query: { status: "open" } } })).then(
      (r) => {
        if (!live) return;
        const scannable = r.sessions.filter((s) => s.status === "running" && s.working_directory);
        setSessions(scannable);
        setChosen((c) => c || scannable[0]?.id || "");
      },
      (e) => live && setState({ kind: "failed", message: messageOf(e) }),
    );
    return () => {
      live = false;
    };
  }, [projectId, canWrite]);
  if (!canWrite) return null;
  const scan = async () => {
    const session = sessions.find((s) => s.id === chosen);
    if (!session) return;
    // Only a scan newer than what the page holds now answers this one.
    const after = Math.max(0, ...scans.map((e) => e.seq));
    try {
      await ok(hub.POST("/api/v1/projects/{id}/sessions/{sid}/scan", { params: { path: { id: projectId, sid: session.id } } }));
      setState({ kind: "asked", name: session.name, sessionId: session.id, after });
    } catch (e) {
      setState({ kind: "failed", message: messageOf(e) });
    }
  };
  return (
    <div class="scan-now">
      {sessions.length === 0 ? (
        <span class="muted">No running session with a working directory to scan.</span>
      ) : (
        <>
          <label>
            Session{" "}
            <select value={chosen} onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}>
              {sessions.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name} · {s.server_name} · {s.working_directory}
                </option>
              ))}
            </select>
          </label>
          <button onClick={() => void scan()}>Scan now</button>
        </>
      )}
      {state.kind === "asked" && <span role="status">Scan of {state.name} requested: the page updates when it comes back.</span>}
      {state.kind === "failed" && <Problem message={state.message} />}
    </div>
  );
}
