/** Making a personal access token: its name, scope, projects and lifetime. Shown on the account page. */
import { useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import type { IssuedPersonalToken, Project } from "../types";
import { Problem } from "./controls";

const DAY = 86_400;
export const LIFETIMES = [
  { days: 7, label: "7 days" },
  { days: 30, label: "30 days" },
  { days: 90, label: "90 days" },
  { days: 365, label: "1 year" },
];

export type TokenRequest = { name: string; scope: "read" | "write"; project_ids?: string[]; expires_in_seconds: number };

/** Makes a token; the answer carries the token itself, this once. */
export const makeToken = (body: TokenRequest) => ok(hub.POST("/api/v1/auth/me/tokens", { body }));

export const lifetime = (days: number) => days * DAY;

export function TokenForm({ projects, onMade }: { projects: Project[]; onMade: (issued: IssuedPersonalToken) => void }) {
  const [name, setName] = useState("");
  const [scope, setScope] = useState<"read" | "write">("write");
  const [some, setSome] = useState(false);
  const [chosen, setChosen] = useState<string[]>([]);
  const [days, setDays] = useState(90);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const toggle = (id: string, on: boolean) => setChosen((ids) => (on ? [...ids, id] : ids.filter((x) => x !== id)));
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    if (some && chosen.length === 0) return setError("Choose at least one project, or let the token reach all of yours");
    setBusy(true);
    try {
      const issued = await makeToken({ name, scope, expires_in_seconds: lifetime(days), ...(some ? { project_ids: chosen } : {}) });
      setName("");
      setChosen([]);
      setSome(false);
      onMade(issued);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="token-form" onSubmit={(e) => void submit(e)} aria-label="New personal access token">
      <div class="inline">
        <label>
          Name
          <input name="token-name" required maxLength={100} placeholder="laptop: Claude Code" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Scope
          <select name="token-scope" value={scope} onChange={(e) => setScope(e.currentTarget.value as "read" | "write")}>
            <option value="write">write: as you</option>
            <option value="read">read: look only</option>
          </select>
        </label>
        <label>
          Expires in
          <select name="token-lifetime" value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            {LIFETIMES.map((l) => (
              <option key={l.days} value={l.days}>
                {l.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <fieldset class="token-projects">
        <legend>Projects</legend>
        <label class="choice">
          <input type="radio" name="token-reach" checked={!some} onChange={() => setSome(false)} /> All my projects (as they are at each use)
        </label>
        <label class="choice">
          <input type="radio" name="token-reach" checked={some} onChange={() => setSome(true)} /> Only these:
        </label>
        {some && (
          <div class="project-choices">
            {projects.map((p) => (
              <label class="choice" key={p.id}>
                <input type="checkbox" checked={chosen.includes(p.id)} onChange={(e) => toggle(p.id, e.currentTarget.checked)} /> {p.name}
              </label>
            ))}
          </div>
        )}
      </fieldset>
      <button type="submit" disabled={busy}>
        Make token
      </button>
      <Problem message={error} />
    </form>
  );
}
