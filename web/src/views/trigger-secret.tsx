/**
 * A trigger's URL and secret right after it was made or its secret rotated: the secret is shown this once (the hub
 * keeps a digest and a sealed copy). For a GitHub trigger, the steps that set the webhook up in the repository.
 */
import type { TriggerWithSecret } from "../automation-api";
import { CopyLine } from "./copy";
import { ShownOnce } from "./secret-once";
import { GITHUB_EVENTS } from "./trigger-form";

export function TriggerSecret({ trigger: t, rotated, onDone }: { trigger: TriggerWithSecret; rotated: boolean; onDone: () => void }) {
  const ticks = GITHUB_EVENTS.filter((e) => t.github?.events.includes(e.value)).map((e) => e.tick);
  return (
    <div class="trigger-secret" data-trigger-id={t.id}>
      <ShownOnce
        title={rotated ? "The trigger's new secret" : "The trigger's URL and secret"}
        label="Secret"
        name="trigger-secret"
        value={t.secret}
        onDone={onDone}
      >
        <strong>Shown once.</strong> Copy the secret now: the hub keeps only a digest and cannot show it again (rotate it if it is lost).
        {rotated && " The old secret no longer works: put this one wherever the old one was."}
      </ShownOnce>
      <div class="panel">
        <CopyLine label="URL" name="trigger-url" value={t.url} />
        {t.kind === "github" ? (
          <>
            <h3>Set it up in GitHub</h3>
            <ol class="setup-steps">
              <li>In the repository, open Settings → Webhooks → Add webhook.</li>
              <li>
                Payload URL: the URL above. Content type: <code>application/json</code>. Secret: the secret above.
              </li>
              <li>
                Under "Which events would you like to trigger this webhook?", choose "Let me select individual events" and tick{" "}
                {ticks.length
                  ? ticks.map((x, i) => (
                      <span key={x}>
                        {i === 0 ? "" : i === ticks.length - 1 ? " and " : ", "}
                        <strong>{x}</strong>
                      </span>
                    ))
                  : "the events above"}
                ; untick Pushes.
              </li>
              <li>Keep it Active and press Add webhook.</li>
            </ol>
          </>
        ) : (
          <>
            <h3>Call it</h3>
            <pre class="json small">{`curl -X POST '${t.url}' \\\n  -H 'Authorization: Bearer <the secret>' \\\n  -H 'Content-Type: application/json' \\\n  -d '{"parameters": {}}'`}</pre>
            <p class="muted small">Or sign the call with the secret as a Standard Webhooks sender does (webhook-id, webhook-timestamp, webhook-signature).</p>
          </>
        )}
      </div>
    </div>
  );
}
