/**
 * Where another agent finds this project as an A2A agent: its card's address, and the skills the card offers now (one
 * per capability the project's online servers declare).
 */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { CopyLine } from "./copy";

interface CardSkill {
  id: string;
  description: string;
}

export function A2ACard({ projectId }: { projectId: string }) {
  const [skills, setSkills] = useState<CardSkill[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const address = `${location.origin}/a2a/${projectId}/.well-known/agent-card.json`;
  useEffect(() => {
    const read = hub.GET("/a2a/{projectId}/.well-known/agent-card.json", { params: { path: { projectId } }, headers: { "A2A-Version": "1.0" } });
    void ok(read).then(
      (card) => setSkills(((card as { skills?: CardSkill[] }).skills ?? []).map(({ id, description }) => ({ id, description }))),
      (e: Error) => setError(e.message),
    );
  }, [projectId]);
  return (
    <section class="panel a2a-card" aria-labelledby="a2a-heading">
      <h2 id="a2a-heading">Delegating to this project (A2A)</h2>
      <p class="muted">
        An agent built on another stack can send this project work with the Agent2Agent protocol: each message becomes a task here, routed to the best of the
        project's agents, and its questions and results go back to it. Give it the card's address and a credential of the hub (a personal access token, or an
        agent's API key) as a bearer token.
      </p>
      <CopyLine label="Agent card" name="a2a-card-url" value={address} />
      {error && <p role="alert">{error}</p>}
      {skills && skills.length > 0 && (
        <>
          <h3>Skills offered now</h3>
          <ul class="skills">
            {skills.map((s) => (
              <li key={s.id} title={s.description}>
                <code>{s.id}</code>
              </li>
            ))}
          </ul>
        </>
      )}
      {skills && skills.length === 0 && (
        <p class="muted">
          No skills yet: the card lists what the project's online servers declare as capabilities. Until one does, a task sent this way waits for someone to
          assign it.
        </p>
      )}
    </section>
  );
}
