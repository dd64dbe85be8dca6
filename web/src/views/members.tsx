/** Who belongs to a project, and as what; admins add members with a role (member or viewer), change it, and remove them. */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useMe } from "../me";
import type { Me, Member, Project } from "../types";
import { ProjectTabs } from "./project-tabs";
import { Problem, useAction } from "./controls";
import { ProjectRoleSelect, type ProjectRole } from "./roles";
import { absoluteDate } from "../time-format";

export function Members({ projectId }: { projectId: string }) {
  const me = useMe();
  const admin = me.role === "admin";
  const [project, setProject] = useState<Project | null>(null);
  const [members, setMembers] = useState<Member[] | null>(null);
  const [users, setUsers] = useState<Me[]>([]);
  const [chosen, setChosen] = useState("");
  const [role, setRole] = useState<ProjectRole>("member");
  const [error, setError] = useState<string | null>(null);

  const load = async () => {
    setMembers((await ok(hub.GET("/api/v1/projects/{id}/members", { params: { path: { id: projectId } } }))).members);
  };
  useEffect(() => {
    void ok(hub.GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } })).then(setProject, (e) => setError(e.message));
    void load().catch((e) => setError(e.message));
    if (admin)
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
      <table class="servers members-table">
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Role here</th>
            <th scope="col">Since</th>
            {admin && (
              <th scope="col">
                <span class="muted">Remove</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {members?.map((m) => (
            <MemberRow key={m.id} projectId={projectId} member={m} admin={admin} onChanged={() => void load()} />
          ))}
        </tbody>
      </table>
      {members?.length === 0 && <p class="muted">No members yet; admins see every project.</p>}
      {admin && (
        <form
          class="inline add-member"
          onSubmit={(e) => {
            e.preventDefault();
            void act(() => ok(hub.POST("/api/v1/projects/{id}/members", { params: { path: { id: projectId } }, body: { user_id: chosen, role } })));
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
          <label>
            As
            <ProjectRoleSelect label="Role of the new member" value={role} onChange={setRole} />
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

/** What a member's roles come to here: a viewer of the hub stays one, an admin stays an admin. */
const roleNote = (m: Member) => (m.effective_role === m.project_role ? null : `${m.effective_role} here: their own role is ${m.role}`);

function MemberRow({ projectId, member: m, admin, onChanged }: { projectId: string; member: Member; admin: boolean; onChanged: () => void }) {
  const { run, busy, problem } = useAction();
  const path = { params: { path: { id: projectId, userId: m.id } } };
  const changeRole = (role: ProjectRole) =>
    run("role", async () => {
      await ok(hub.PATCH("/api/v1/projects/{id}/members/{userId}", { ...path, body: { role } }));
      onChanged();
    });
  const remove = () =>
    confirm(`Remove ${m.email} from this project? Their live views of it close.`) &&
    void run("remove", async () => {
      await ok(hub.DELETE("/api/v1/projects/{id}/members/{userId}", path));
      onChanged();
    });
  const note = roleNote(m);
  return (
    <tr data-member={m.email}>
      <th scope="row">
        {m.name ?? m.email} <span class="muted">{m.name ? m.email : ""}</span>
      </th>
      <td data-label="Role here">
        {admin ? (
          <ProjectRoleSelect label={`Role of ${m.email} in this project`} value={m.project_role} onChange={(r) => void changeRole(r)} />
        ) : (
          m.effective_role
        )}
        {note && <span class="muted"> ({note})</span>}
        {problem("role")}
      </td>
      <td data-label="Since">{absoluteDate(m.member_since)}</td>
      {admin && (
        <td>
          <button type="button" class="danger" disabled={busy !== null} onClick={remove}>
            Remove {m.email}
          </button>
          {problem("remove")}
        </td>
      )}
    </tr>
  );
}
