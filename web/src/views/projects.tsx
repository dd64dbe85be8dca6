/** The projects the person can see, each with its state at a glance, and a form to create one. */
import { useEffect, useState } from "preact/hooks";
import type { Schemas } from "../../../client";
import { hub, messageOf, ok } from "../api";
import { useCanWrite } from "../me";
import { reloadProjects, useProjects } from "../project-names";
import { linkProps, navigate } from "../router";
import { Empty, Failed, Loading } from "../ui/states";
import { usd } from "../usage-format";
import { Problem } from "./controls";
import { StatusBar } from "./status-bar";
import "./overview.css";

type Glance = Schemas["ProjectAtAGlance"];

export function Projects() {
  const canWrite = useCanWrite();
  const [glances, setGlances] = useState<Glance[] | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const descriptions = new Map((useProjects() ?? []).map((p) => [p.id, p.description]));

  const read = () => {
    setFailed(null);
    void ok(hub.GET("/api/v1/projects/overview")).then(
      (r) => setGlances(r.projects),
      (e) => setFailed(messageOf(e)),
    );
  };
  useEffect(read, []);

  return (
    <section>
      <h1>Projects</h1>
      {failed ? (
        <Failed what="the projects" message={failed} retry={read} />
      ) : glances === null ? (
        <Loading what="the projects" />
      ) : glances.length === 0 ? (
        <Empty title="No projects yet.">{canWrite ? "Create one below to give your agents somewhere to work." : "Ask an admin to add you to one."}</Empty>
      ) : (
        <ul class="project-cards">
          {glances.map((g) => (
            <ProjectCard key={g.project_id} glance={g} description={descriptions.get(g.project_id) ?? null} />
          ))}
        </ul>
      )}
      {canWrite && <NewProject />}
    </section>
  );
}

function ProjectCard({ glance: g, description }: { glance: Glance; description: string | null }) {
  const base = `/projects/${g.project_id}`;
  return (
    <li class="project-card" data-project-id={g.project_id}>
      <div class="project-card-head">
        {/* The board is the page people open a project for; the overview is its first tab and the link below. */}
        <a class="project-name" {...linkProps(`${base}/board`)}>
          {g.name}
        </a>
      </div>
      {description && <p class="project-description">{description}</p>}
      <StatusBar counts={g.open_by_status} />
      <dl class="glance">
        <Stat name="open_tasks" label="Open tasks" value={g.open_tasks} />
        <Stat name="questions_waiting" label="Waiting on you" value={g.questions_waiting} tone={g.questions_waiting > 0 ? "attention" : undefined} />
        <Stat name="agents_online" label="Agents online" value={g.agents_online} />
        <Stat name="failures_today" label="Failed today" value={g.failures_today} tone={g.failures_today > 0 ? "alert" : undefined} />
        <Stat name="spend_today_usd" label="Spend today" value={usd(g.spend_today_usd)} />
      </dl>
      <nav class="project-card-links" aria-label={`${g.name}'s pages`}>
        <a {...linkProps(`${base}/overview`)}>Overview</a>
        <a {...linkProps(`${base}/board`)}>Board</a>
        {g.questions_waiting > 0 && <a {...linkProps("/inbox")}>Inbox</a>}
        <a {...linkProps(`${base}/usage`)}>Usage</a>
      </nav>
    </li>
  );
}

function Stat(props: { name: string; label: string; value: number | string; tone?: "alert" | "attention" }) {
  return (
    <div>
      <dt>{props.label}</dt>
      <dd class={props.tone} data-stat={props.name}>
        {props.value}
      </dd>
    </div>
  );
}

function NewProject() {
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const project = await ok(hub.POST("/api/v1/projects", { body: { name } }));
      void reloadProjects();
      navigate(`/projects/${project.id}/board`);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <>
      <form class="inline" onSubmit={create}>
        <label>
          New project
          <input name="project-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit">Create project</button>
      </form>
      <Problem message={error} />
    </>
  );
}
