/** Everyone who can sign in (admins): their role and status, adding a person directly, and inviting one by link. */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useMe } from "../me";
import type { Me, Role } from "../types";
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { useAction } from "./controls";
import { Invites } from "./invites";
import { ROLE_NOTES, RoleSelect } from "./roles";
import { absoluteTime } from "../time-format";

export function People() {
  const me = useMe();
  const [users, setUsers] = useState<Me[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    void ok(hub.GET("/api/v1/users")).then(
      (r) => (setUsers(r.users), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(() => {
    if (me.role === "admin") load();
  }, [me.role]);

  if (me.role !== "admin") return <Empty title="Only admins manage people." />;
  return (
    <section class="people">
      <h1>People</h1>
      <p class="muted">
        Everyone who can sign in to this hub. A person sees the projects they belong to; on a project's Members page an admin can make them a viewer there.
      </p>
      {users === null ? (
        error ? (
          <Failed what="the people" message={error} retry={load} />
        ) : (
          <Loading what="people" />
        )
      ) : (
        <DataTable
          class="people-table"
          label="People"
          rows={users}
          rowKey={(u) => u.id}
          rowAttributes={(u) => ({ "data-user": u.email, "data-active": String(u.active) })}
          columns={[
            { label: "Person", rowHeader: true, cell: (u) => <PersonName user={u} self={u.id === me.id} /> },
            { label: "Role", cell: (u) => <PersonRole user={u} self={u.id === me.id} onChanged={load} /> },
            { label: "Status", cell: (u) => <PersonStatus user={u} /> },
            { label: "Actions", actions: true, cell: (u) => u.id !== me.id && <PersonActive user={u} onChanged={load} /> },
          ]}
        />
      )}
      <div class="people-forms">
        <Invites />
        <NewPerson onMade={load} />
      </div>
    </section>
  );
}

function PersonName({ user: u, self }: { user: Me; self: boolean }) {
  return (
    <>
      {u.name ?? u.email} {u.name && <span class="muted">{u.email}</span>}
      {self && <span class="muted"> (you)</span>}
    </>
  );
}

/** Saves a change to a person, confirms it, and reads the list again. */
function usePersonChange(u: Me, onChanged: () => void) {
  const { run, busy, problem } = useAction();
  const change = (key: string, body: { role?: Role; active?: boolean }, done: string) =>
    run(key, async () => {
      await ok(hub.PATCH("/api/v1/users/{id}", { params: { path: { id: u.id } }, body }));
      toast(done);
      onChanged();
    });
  return { change, busy, problem };
}

function PersonRole({ user: u, self, onChanged }: { user: Me; self: boolean; onChanged: () => void }) {
  const { change, busy, problem } = usePersonChange(u, onChanged);
  if (self) return <>{u.role}</>;
  return (
    <>
      <select
        aria-label={`Role of ${u.email}`}
        value={u.role}
        disabled={busy !== null}
        aria-busy={busy !== null}
        onChange={(e) => {
          const role = e.currentTarget.value as Role;
          void change("role", { role }, `${u.email} is now ${role === "admin" ? "an" : "a"} ${role}.`);
        }}
      >
        {(Object.keys(ROLE_NOTES) as Role[]).map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      {problem("role")}
    </>
  );
}

function PersonStatus({ user: u }: { user: Me }) {
  return u.active ? (
    <span class="status status-active">active</span>
  ) : (
    <span class="status status-deactivated" title={u.deactivated_at ? `since ${absoluteTime(u.deactivated_at)}` : undefined}>
      deactivated
    </span>
  );
}

function PersonActive({ user: u, onChanged }: { user: Me; onChanged: () => void }) {
  const { change, busy, problem } = usePersonChange(u, onChanged);
  const who = u.name ?? u.email;
  const deactivate = () =>
    confirm(`Deactivate ${who}? They are signed out everywhere at once, and cannot sign in until an admin reactivates them.`) &&
    void change("active", { active: false }, `${who} is deactivated and signed out.`);
  return (
    <>
      {u.active ? (
        <button type="button" class="danger" disabled={busy !== null} aria-busy={busy !== null} aria-label={`Deactivate ${u.email}`} onClick={deactivate}>
          Deactivate
        </button>
      ) : (
        <button
          type="button"
          class="secondary"
          disabled={busy !== null}
          aria-busy={busy !== null}
          aria-label={`Reactivate ${u.email}`}
          onClick={() => void change("active", { active: true }, `${who} can sign in again.`)}
        >
          Reactivate
        </button>
      )}
      {problem("active")}
    </>
  );
}

/** Adding a person directly: the admin sets the first password and hands it over. */
function NewPerson({ onMade }: { onMade: () => void }) {
  const blank = { email: "", name: "", password: "", role: "member" as Role };
  const [draft, setDraft] = useState(blank);
  const [made, setMade] = useState<string | null>(null);
  const { run, busy, problem } = useAction();
  const field = (key: keyof typeof blank) => (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [key]: e.currentTarget.value });
  const submit = (e: Event) => {
    e.preventDefault();
    setMade(null);
    void run("create", async () => {
      const user = await ok(
        hub.POST("/api/v1/users", {
          body: { email: draft.email, password: draft.password, role: draft.role, ...(draft.name.trim() ? { name: draft.name } : {}) },
        }),
      );
      setMade(`${user.email} can sign in now with the password you chose.`);
      toast(`Added ${user.email}.`);
      setDraft(blank);
      onMade();
    });
  };
  return (
    <form class="panel new-person" onSubmit={submit} aria-labelledby="new-person-title">
      <h2 id="new-person-title">Add a person</h2>
      <p class="muted">Set their first password yourself and hand it over; they can change it from their account.</p>
      <label>
        Email
        <input type="email" name="email" required autocomplete="off" value={draft.email} onInput={field("email")} />
      </label>
      <label>
        Name
        <input name="name" value={draft.name} onInput={field("name")} />
      </label>
      <label>
        Password
        <input type="password" name="password" required minLength={8} autocomplete="new-password" value={draft.password} onInput={field("password")} />
      </label>
      <RoleSelect value={draft.role} onChange={(role) => setDraft({ ...draft, role })} />
      <button type="submit" disabled={busy !== null} aria-busy={busy !== null}>
        Add person
      </button>
      {problem("create")}
      {made && (
        <p class="muted" role="status">
          {made}
        </p>
      )}
    </form>
  );
}
