/**
 * Usage across every project the person sees, this month (UTC) so far: one line a project, the costliest first, each
 * leading to its own Usage page. Each project's totals are its usage read (GET /projects/{id}/usage), read together.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useProjects } from "../project-names";
import { linkProps } from "../router";
import { Empty, Failed, Loading } from "../ui/states";
import { adoptStyles } from "../adopt-styles";
import { addUsage, apiTime, exactTokens, tokens, tokensOf, usd, type Usage } from "../usage-format";
import pageCss from "./overview-page.css" with { type: "text" };

adoptStyles(pageCss as string);

interface Line {
  id: string;
  name: string;
  totals: Usage;
}

const monthSoFar = () => {
  const today = new Date().toISOString().slice(0, 10);
  return { from: `${today.slice(0, 8)}01`, to: today };
};

export function UsageAll() {
  const projects = useProjects();
  const [lines, setLines] = useState<Line[] | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const { from, to } = monthSoFar();
  const read = () => {
    if (!projects) return;
    setFailed(null);
    void Promise.all(
      projects.map(async (p) => {
        const r = await ok(hub.GET("/api/v1/projects/{id}/usage", { params: { path: { id: p.id }, query: { from, to, group_by: "model" } } }));
        return { id: p.id, name: p.name, totals: r.totals };
      }),
    ).then(
      (all) => setLines(all.sort((a, b) => b.totals.cost_usd - a.totals.cost_usd || a.name.localeCompare(b.name))),
      (e) => setFailed(messageOf(e)),
    );
  };
  useEffect(read, [projects]);

  const month = new Date(`${from}T00:00:00Z`).toLocaleDateString("en-US", { month: "long", year: "numeric", timeZone: "UTC" });
  const total = (lines ?? []).reduce<Usage | null>((sum, l) => addUsage(sum, l.totals), null);
  const most = Math.max(0, ...(lines ?? []).map((l) => l.totals.cost_usd));
  return (
    <section>
      <h1>Usage</h1>
      <p class="muted">
        What the agents used in {month} so far (UTC, {from} to {to}), in every project you can see.
      </p>
      {failed ? (
        <Failed what="usage" message={failed} retry={read} />
      ) : lines === null ? (
        <Loading what="usage" />
      ) : lines.length === 0 ? (
        <Empty title="No projects yet." />
      ) : (
        <>
          <div class="tiles">
            <div class="tile">
              <span class="tile-label">Cost this month</span>
              <span class="tile-value" data-stat="cost">
                {usd(total!.cost_usd)}
              </span>
            </div>
            <div class="tile">
              <span class="tile-label">Tokens this month</span>
              <span class="tile-value" title={exactTokens(tokensOf(total!))}>
                {tokens(tokensOf(total!))}
              </span>
            </div>
            <div class="tile">
              <span class="tile-label">Model API time</span>
              <span class="tile-value">{apiTime(total!.api_ms)}</span>
            </div>
          </div>
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Usage per project">
            <table class="data usage-projects">
              <thead>
                <tr>
                  <th scope="col">Project</th>
                  <th scope="col">Cost</th>
                  <th scope="col">Tokens</th>
                  <th scope="col">API time</th>
                </tr>
              </thead>
              <tbody>
                {lines.map((l) => (
                  <tr key={l.id} data-project-id={l.id}>
                    <td>
                      <a {...linkProps(`/projects/${l.id}/usage`)}>{l.name}</a>
                    </td>
                    <td>
                      {usd(l.totals.cost_usd)}{" "}
                      {most > 0 && <span class="load-bar" style={{ width: `${(l.totals.cost_usd / most) * 4}rem` }} aria-hidden="true" />}
                    </td>
                    <td title={exactTokens(tokensOf(l.totals))}>{tokens(tokensOf(l.totals))}</td>
                    <td>{apiTime(l.totals.api_ms)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
