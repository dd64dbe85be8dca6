/**
 * An invite link's page, open without an account: what the invite grants, then email, name and password; accepting
 * signs the new person in and lands them in the first project it grants.
 */
import { useEffect, useState } from "preact/hooks";
import { acceptInvite, ApiError, hub, messageOf, ok } from "../api";
import { linkProps, navigate } from "../router";
import type { InvitePreview, Me } from "../types";
import { Problem } from "./controls";
import { absoluteTime } from "../time-format";

/** What the person may do in a project the invite grants: the lower of the two roles (an admin stays an admin). */
const roleThere = (role: Me["role"], projectRole: "member" | "viewer") =>
  role === "admin" ? "admin" : role === "viewer" || projectRole === "viewer" ? "viewer: reads only" : "member";

export function AcceptInvite({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const token = new URLSearchParams(location.search).get("token") ?? "";
  const [invite, setInvite] = useState<InvitePreview | null>(null);
  const [gone, setGone] = useState<string | null>(null);
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!token) return setGone("This address has no invite in it: open the whole link you were sent.");
    void ok(hub.GET("/api/v1/invites/accept", { params: { query: { token } } })).then(
      (found) => {
        setInvite(found);
        if (found.email) setEmail(found.email);
      },
      (e) => setGone(e instanceof ApiError && e.status === 410 ? e.message : messageOf(e)),
    );
  }, [token]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await acceptInvite({ token, email, name, password });
      const first = invite?.projects[0];
      navigate(first ? `/projects/${first.id}` : "/");
      onSignedIn(me);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in accept-invite">
      <form onSubmit={(e) => void submit(e)} aria-labelledby="invite-title">
        <h1 id="invite-title">Join the Orchestratia hub</h1>
        {!invite && !gone && <p class="muted">Reading the invite…</p>}
        {gone && (
          <>
            <Problem message={gone} />
            <a {...linkProps("/")}>Sign in instead</a>
          </>
        )}
        {invite && (
          <>
            <p class="invite-offer" data-role={invite.role}>
              You are invited as <strong>{invite.role}</strong>
              {invite.projects.length === 0 ? "." : " to:"}
            </p>
            {invite.projects.length > 0 && (
              <ul class="invite-projects">
                {invite.projects.map((p) => (
                  <li key={p.id}>
                    {p.name} <span class="muted">({roleThere(invite.role, p.role)})</span>
                  </li>
                ))}
              </ul>
            )}
            <p class="muted">
              The link works once, until <time dateTime={invite.expires_at}>{absoluteTime(invite.expires_at)}</time>.
            </p>
            <label>
              Email
              <input
                type="email"
                name="email"
                autocomplete="username"
                required
                readOnly={invite.email !== null}
                value={email}
                onInput={(e) => setEmail(e.currentTarget.value)}
              />
            </label>
            <label>
              Name
              <input name="name" autocomplete="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </label>
            <label>
              Password
              <input
                type="password"
                name="password"
                autocomplete="new-password"
                required
                minLength={8}
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
              <span class="muted hint">At least 8 characters.</span>
            </label>
            <Problem message={error} />
            <button type="submit" disabled={busy}>
              Join
            </button>
          </>
        )}
      </form>
    </main>
  );
}
