/** Who belongs to a project; admins add and remove members. */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useMe } from "../me";
import type { Me, Member, Project } from "../types";
import { ProjectTabs } from "./project-tabs";
import { Problem } from "./controls";

export function Members({ projectId }: { projectId: string }) {
  const me = useMe();
  const [project, setProject] = useState<Project | null>(null);
  const [members, setMembers] = useState<Member[] | null>(null);
  const [users, setUsers] = useState<Me[]>([]);
  const [chosen, setChosen] = useState("");
  const [error, setError] = useState<string | null>(null);

  const load = async () => {
    setMembers((await ok(hub.GET("/api/v1/projects/{id}/members", { params: { path: { id: projectId } } }))).members);
  };
  useEffect(() => {
    void ok(hub.GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } })).then(setProject, (e) => setError(e.message));
    void load().catch((e) => setError(e.message));
    if (me.role === "admin")
      void ok(hub.GET("/api/v1/users")).then(
        (r) => setUsers(r.users),
        () => undefined,
      );
  }, [projectId]);

  const act = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      await load();
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const candidates = users.filter((u) => !members?.some((m) => m.id === u.id));

  return (
    <section>
      <ProjectTabs projectId={projectId} name={project?.name} current="members" />
      <table class="servers">
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Role</th>
            <th scope="col">Since</th>
            {me.role === "admin" && (
              <th scope="col">
                <span class="muted">Remove</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {members?.map((m) => (
            <tr key={m.id}>
              <th scope="row">
                {m.name ?? m.email} <span class="muted">{m.name ? m.email : ""}</span>
              </th>
              <td>{m.role}</td>
              <td>{new Date(m.member_since).toLocaleDateString()}</td>
              {me.role === "admin" && (
                <td>
                  <button
                    type="button"
                    class="danger"
                    onClick={() =>
                      void act(() => ok(hub.DELETE("/api/v1/projects/{id}/members/{userId}", { params: { path: { id: projectId, userId: m.id } } })))
                    }
                  >
                    Remove {m.email}
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {members?.length === 0 && <p class="muted">No members yet; admins see every project.</p>}
      {me.role === "admin" && (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void act(() => ok(hub.POST("/api/v1/projects/{id}/members", { params: { path: { id: projectId } }, body: { user_id: chosen } })));
          }}
        >
          <label>
            Add a member
            <select value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
              <option value="">choose a person</option>
              {candidates.map((u) => (
                <option value={u.id}>
                  {u.email} ({u.role})
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={!chosen}>
            Add member
          </button>
        </form>
      )}
      <Problem message={error} />
    </section>
  );
}
