/** Who belongs to a project, and as what; admins add members with a role (member or viewer), change it, and remove them. */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useMe } from "../me";
import type { Me, Member, Project } from "../types";
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
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
    setError(null);
  };
  useEffect(() => {
    void ok(hub.GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } })).then(setProject, (e) => setError(e.message));
    void load().catch((e) => setError(messageOf(e)));
    if (admin)
      void ok(hub.GET("/api/v1/users")).then(
        (r) => setUsers(r.users),
        () => undefined,
      );
  }, [projectId]);

  const [adding, setAdding] = useState(false);
  const candidates = users.filter((u) => !members?.some((m) => m.id === u.id));
  const add = async (e: Event) => {
    e.preventDefault();
    const person = users.find((u) => u.id === chosen);
    setError(null);
    setAdding(true);
    try {
      await ok(hub.POST("/api/v1/projects/{id}/members", { params: { path: { id: projectId } }, body: { user_id: chosen, role } }));
      // The picker goes back to asking, rather than showing the person just added (no longer offered) as a blank choice.
      setChosen("");
      toast(`Added ${person?.email ?? "the person"} as ${role}.`);
      await load();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setAdding(false);
    }
  };

  return (
    <section class="members-page">
      <ProjectTabs projectId={projectId} name={project?.name} current="members" />
      {members === null ? (
        error ? (
          <Failed what="the members" message={error} retry={() => void load().catch((e) => setError(messageOf(e)))} />
        ) : (
          <Loading what="members" />
        )
      ) : members.length === 0 ? (
        <Empty title="No members yet.">Admins see every project; add the people who work on this one.</Empty>
      ) : (
        <DataTable
          class="members-table"
          label="Members"
          rows={members}
          rowKey={(m) => m.id}
          rowAttributes={(m) => ({ "data-member": m.email })}
          columns={[
            {
              label: "Member",
              rowHeader: true,
              cell: (m) => (
                <>
                  {m.name ?? m.email} <span class="muted">{m.name ? m.email : ""}</span>
                </>
              ),
            },
            { label: "Role here", cell: (m) => <MemberRole projectId={projectId} member={m} admin={admin} onChanged={() => void load()} /> },
            { label: "Since", cell: (m) => absoluteDate(m.member_since) },
            admin && { label: "Remove", actions: true, cell: (m) => <RemoveMember projectId={projectId} member={m} onChanged={() => void load()} /> },
          ]}
        />
      )}
      {admin && members !== null && (
        <form class="panel form-row add-member" onSubmit={(e) => void add(e)}>
          <label>
            Add a member
            <select value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
              <option value="">{candidates.length ? "choose a person" : "everyone is a member"}</option>
              {candidates.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.email} ({u.role})
                </option>
              ))}
            </select>
          </label>
          <label>
            As
            <ProjectRoleSelect label="Role of the new member" value={role} onChange={setRole} />
          </label>
          <button type="submit" disabled={!chosen || adding} aria-busy={adding}>
            Add member
          </button>
        </form>
      )}
      {members !== null && <Problem message={error} />}
    </section>
  );
}

/** What a member's roles come to here: a viewer of the hub stays one, an admin stays an admin. */
const roleNote = (m: Member) => (m.effective_role === m.project_role ? null : `${m.effective_role} here: their own role is ${m.role}`);

const pathOf = (projectId: string, m: Member) => ({ params: { path: { id: projectId, userId: m.id } } });

function MemberRole({ projectId, member: m, admin, onChanged }: { projectId: string; member: Member; admin: boolean; onChanged: () => void }) {
  const { run, problem } = useAction();
  const changeRole = (role: ProjectRole) =>
    run("role", async () => {
      await ok(hub.PATCH("/api/v1/projects/{id}/members/{userId}", { ...pathOf(projectId, m), body: { role } }));
      toast(`${m.email} is now a ${role} here.`);
      onChanged();
    });
  const note = roleNote(m);
  return (
    <>
      {admin ? (
        <ProjectRoleSelect label={`Role of ${m.email} in this project`} value={m.project_role} onChange={(r) => void changeRole(r)} />
      ) : (
        m.effective_role
      )}
      {note && <span class="muted"> ({note})</span>}
      {problem("role")}
    </>
  );
}

function RemoveMember({ projectId, member: m, onChanged }: { projectId: string; member: Member; onChanged: () => void }) {
  const { run, busy, problem } = useAction();
  const remove = () =>
    confirm(`Remove ${m.email} from this project? Their live views of it close.`) &&
    void run("remove", async () => {
      await ok(hub.DELETE("/api/v1/projects/{id}/members/{userId}", pathOf(projectId, m)));
      toast(`Removed ${m.email} from this project.`);
      onChanged();
    });
  return (
    <>
      <button type="button" class="danger" disabled={busy !== null} aria-busy={busy !== null} aria-label={`Remove ${m.email}`} onClick={remove}>
        Remove
      </button>
      {problem("remove")}
    </>
  );
}
