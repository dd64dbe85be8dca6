/** Who a task goes to: one of the servers serving its project, or one of the project's open sessions. */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import type { Server, Session } from "../types";
import { serves } from "./start-session";

/** An option's value: a server's name, or `session:<id>`. */
const SESSION = "session:";

export interface Assignees {
  servers: Server[];
  sessions: Session[];
}

/** The project's servers and open sessions, read once (null until read). */
export function useAssignees(projectId: string): Assignees | null {
  const [assignees, setAssignees] = useState<Assignees | null>(null);
  useEffect(() => {
    let live = true;
    void Promise.all([
      ok(hub.GET("/api/v1/servers")).then((r) => r.servers.filter((s) => serves(s, projectId))),
      ok(hub.GET("/api/v1/projects/{id}/sessions", { params: { path: { id: projectId }, query: { status: "open" } } })).then((r) => r.sessions),
    ]).then(
      ([servers, sessions]) => live && setAssignees({ servers, sessions }),
      () => live && setAssignees({ servers: [], sessions: [] }),
    );
    return () => {
      live = false;
    };
  }, [projectId]);
  return assignees;
}

/** The assign request's body for a chosen value. */
export const assignBodyOf = (value: string) => (value.startsWith(SESSION) ? { session_id: value.slice(SESSION.length) } : { server_name: value });

interface Props {
  value: string;
  onChange: (value: string) => void;
  /** Servers as offered: by name, with what to say of each (its status, or its score for the task). */
  servers: { name: string; label: string; title?: string }[];
  sessions: Session[];
  /** What choosing nobody means here. */
  none: string;
  label?: string;
}

export function AssigneeSelect({ value, onChange, servers, sessions, none, label = "Assign to" }: Props) {
  return (
    <label>
      {label}
      <select name="assignee" value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">{none}</option>
        {sessions.length > 0 && (
          <optgroup label="Sessions">
            {sessions.map((s) => (
              <option value={SESSION + s.id} key={s.id}>
                {s.name} on {s.server_name} ({s.status})
              </option>
            ))}
          </optgroup>
        )}
        {servers.length > 0 && (
          <optgroup label="Servers">
            {servers.map((s) => (
              <option value={s.name} key={s.name} title={s.title}>
                {s.label}
              </option>
            ))}
          </optgroup>
        )}
      </select>
    </label>
  );
}
