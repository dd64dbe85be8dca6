/** The projects the person can see, and a form to create one. */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useCanWrite } from "../me";
import { linkProps, navigate } from "../router";
import type { Project } from "../types";
import { Problem } from "./controls";

export function Projects() {
  const canWrite = useCanWrite();
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    void ok(hub.GET("/api/v1/projects")).then(
      (r) => setProjects(r.projects),
      (e) => setError(String(e.message)),
    );
  }, []);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const project = await ok(hub.POST("/api/v1/projects", { body: { name } }));
      navigate(`/projects/${project.id}/board`);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section>
      <h1>Projects</h1>
      {projects === null && !error && <p class="loading">Loading…</p>}
      {projects?.length === 0 && <p>No projects yet.</p>}
      <ul class="projects">
        {projects?.map((p) => (
          <li key={p.id}>
            <a {...linkProps(`/projects/${p.id}/board`)}>{p.name}</a>
            {p.description && <span class="muted"> — {p.description}</span>}
          </li>
        ))}
      </ul>
      {canWrite && (
        <form class="inline" onSubmit={create}>
          <label>
            New project
            <input name="project-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit">Create project</button>
        </form>
      )}
      <Problem message={error} />
    </section>
  );
}
