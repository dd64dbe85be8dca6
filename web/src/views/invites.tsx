/** Inviting by link (admins): the role and projects it grants, the link shown once, and the invites still pending. */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import type { Invite, NewInvite as MadeInvite, Project, Role } from "../types";
import { Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { useAction } from "./controls";
import { ProjectRoleSelect, RoleSelect, type ProjectRole } from "./roles";
import { ShownOnce } from "./secret-once";
import { absoluteTime } from "../time-format";

const LIFETIMES: [string, number][] = [
  ["1 day", 86_400],
  ["7 days", 7 * 86_400],
  ["30 days", 30 * 86_400],
];

export function Invites() {
  const [invites, setInvites] = useState<Invite[] | null>(null);
  const [projects, setProjects] = useState<Project[]>([]);
  const [shown, setShown] = useState<{ url: string; expiresAt: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    void ok(hub.GET("/api/v1/invites")).then(
      (r) => (setInvites(r.invites), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(() => {
    load();
    void ok(hub.GET("/api/v1/projects")).then(
      (r) => setProjects(r.projects),
      () => undefined,
    );
  }, []);

  return (
    <div class="invites">
      <NewInvite
        projects={projects}
        onMade={(made) => {
          setShown({ url: made.url, expiresAt: made.expires_at });
          load();
        }}
      />
      {shown && (
        <ShownOnce title="Invite link" label="Link" name="invite-link" value={shown.url} onDone={() => setShown(null)}>
          <strong>Shown once.</strong> Send it to the person: it works once, until {absoluteTime(shown.expiresAt)}. The hub keeps only a digest of it; delete
          the invite below if it goes astray.
        </ShownOnce>
      )}
      <section class="panel" aria-labelledby="pending-title">
        <h2 id="pending-title">Pending invites</h2>
        {invites === null && (error ? <Failed what="the invites" message={error} retry={load} /> : <Loading what="invites" />)}
        {invites?.length === 0 && <p class="muted">None: every invite was accepted, expired or deleted.</p>}
        {invites && invites.length > 0 && (
          <ul class="pending-invites">
            {invites.map((i) => (
              <PendingInvite key={i.id} invite={i} onDeleted={load} />
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

function PendingInvite({ invite: i, onDeleted }: { invite: Invite; onDeleted: () => void }) {
  const { run, busy, problem } = useAction();
  const who = i.email ?? "anyone with the link";
  const remove = () =>
    confirm(`Delete the invite for ${who}? Its link stops working.`) &&
    void run("delete", async () => {
      await ok(hub.DELETE("/api/v1/invites/{id}", { params: { path: { id: i.id } } }));
      toast(`Deleted the invite for ${who}.`);
      onDeleted();
    });
  return (
    <li data-invite={i.id}>
      <span>
        <strong>{who}</strong> as {i.role}
        {i.projects.length > 0 && <> in {i.projects.map((p) => `${p.name} (${p.role})`).join(", ")}</>}
        <span class="muted">
          {" "}
          · expires <time dateTime={i.expires_at}>{absoluteTime(i.expires_at)}</time>
        </span>
      </span>
      <button type="button" class="danger" disabled={busy !== null} aria-busy={busy !== null} aria-label={`Delete the invite for ${who}`} onClick={remove}>
        Delete
      </button>
      {problem("delete")}
    </li>
  );
}

function NewInvite({ projects, onMade }: { projects: Project[]; onMade: (made: MadeInvite) => void }) {
  const [role, setRole] = useState<Role>("member");
  const [granted, setGranted] = useState<Map<string, ProjectRole>>(new Map());
  const [email, setEmail] = useState("");
  const [lifetime, setLifetime] = useState(7 * 86_400);
  const { run, busy, problem } = useAction();
  const toggle = (id: string, on: boolean) => {
    const next = new Map(granted);
    if (on) next.set(id, role === "viewer" ? "viewer" : "member");
    else next.delete(id);
    setGranted(next);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    void run("invite", async () => {
      const made = await ok(
        hub.POST("/api/v1/invites", {
          body: {
            role,
            projects: [...granted].map(([project_id, role]) => ({ project_id, role })),
            expires_in_seconds: lifetime,
            ...(email.trim() ? { email: email.trim() } : {}),
          },
        }),
      );
      setGranted(new Map());
      setEmail("");
      toast("Invite link made: copy it now, it is shown once.");
      onMade(made);
    });
  };
  return (
    <form class="panel new-invite" onSubmit={submit} aria-labelledby="new-invite-title">
      <h2 id="new-invite-title">Invite by link</h2>
      <p class="muted">The person opens the link, sets their name and password, and lands in the projects you choose.</p>
      <RoleSelect value={role} onChange={setRole} />
      <fieldset>
        <legend>Projects</legend>
        {projects.length === 0 && <p class="muted">No project yet.</p>}
        {projects.map((p) => (
          <div class="invite-project" key={p.id}>
            <label>
              <input type="checkbox" name="project" value={p.id} checked={granted.has(p.id)} onChange={(e) => toggle(p.id, e.currentTarget.checked)} />
              {p.name}
            </label>
            {granted.has(p.id) && (
              <ProjectRoleSelect label={`Role in ${p.name}`} value={granted.get(p.id)!} onChange={(r) => setGranted(new Map(granted).set(p.id, r))} />
            )}
          </div>
        ))}
      </fieldset>
      <label>
        Only for this email (optional)
        <input type="email" name="invite-email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </label>
      <label>
        Expires after
        <select name="lifetime" value={lifetime} onChange={(e) => setLifetime(Number(e.currentTarget.value))}>
          {LIFETIMES.map(([label, seconds]) => (
            <option key={seconds} value={seconds}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={busy !== null} aria-busy={busy !== null}>
        Create invite link
      </button>
      {problem("invite")}
    </form>
  );
}
