/** Changing one's own password, on the account page: the current one, then the new one twice. */
import { useState } from "preact/hooks";
import { ApiError, hub, messageOf, ok, signIn } from "../api";
import { useMe } from "../me";
import { Problem } from "./controls";
import { toast } from "../ui/toasts";

const MIN_LENGTH = 8;

export function PasswordSection() {
  const me = useMe();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [confirmed, setConfirmed] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [changed, setChanged] = useState(false);
  const [busy, setBusy] = useState(false);
  const mismatch = confirmed !== "" && confirmed !== next;

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setChanged(false);
    if (next.length < MIN_LENGTH) return setError(`The new password must be at least ${MIN_LENGTH} characters`);
    if (next !== confirmed) return setError("The new password and its confirmation differ");
    setBusy(true);
    try {
      await ok(hub.POST("/api/v1/auth/password", { body: { current_password: current, new_password: next } }));
      // The change ends every sign-in, this browser's included: it signs in again with the new password, waiting out
      // the per-minute limit on sign-ins if the attempts before used it up (the password has changed by then).
      await signInAgain(me.email, next);
      setCurrent("");
      setNext("");
      setConfirmed("");
      setChanged(true);
      toast("Password changed: your other sign-ins have ended.");
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel password" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form class="inline" onSubmit={(e) => void submit(e)}>
        <label>
          Current password
          <input
            type="password"
            name="current-password"
            autocomplete="current-password"
            required
            value={current}
            onInput={(e) => setCurrent(e.currentTarget.value)}
          />
        </label>
        <label>
          New password
          <input
            type="password"
            name="new-password"
            autocomplete="new-password"
            required
            minLength={MIN_LENGTH}
            value={next}
            onInput={(e) => setNext(e.currentTarget.value)}
          />
        </label>
        <label>
          Confirm the new password
          <input
            type="password"
            name="confirm-password"
            autocomplete="new-password"
            required
            aria-invalid={mismatch}
            value={confirmed}
            onInput={(e) => setConfirmed(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          Change password
        </button>
      </form>
      {mismatch && !error && <p class="muted">The confirmation does not match yet.</p>}
      <Problem message={error} />
      {changed && (
        <p role="status">
          Password changed. Your other sign-ins end within 15 minutes, and the MCP clients you allowed are revoked (allow them again); personal access tokens
          keep working.
        </p>
      )}
    </section>
  );
}

/** How long a sign-in after a password change keeps trying while the hub's per-minute limit refuses it. */
const SIGN_IN_AGAIN_MS = 65_000;

async function signInAgain(email: string, password: string) {
  for (const start = Date.now(); ;) {
    try {
      return await signIn(email, password);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 429) || Date.now() - start > SIGN_IN_AGAIN_MS) throw err;
      await new Promise((r) => setTimeout(r, 5_000));
    }
  }
}
