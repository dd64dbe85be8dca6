/**
 * One webhook's deliveries, newest first (the hub keeps the latest 100 to
 * show): what each came to, its attempts on demand, and sending one again.
 * Read again while any is still pending, and when asked to (a test queued,
 * the project's events).
 */
import { When } from "../ui/when";
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { useReread } from "../project-feed";
import type { Delivery, DeliveryAttempt, DeliveryStatus, Webhook } from "../types";
import { DataTable } from "../ui/data-table";
import { Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { Problem, useAction } from "./controls";

/** How soon pending deliveries are read again (the first retries come within seconds). */
const PENDING_POLL_MS = 2_000;

type Filter = "" | DeliveryStatus;

/** What the receiver last answered, or why there was no answer. */
function lastAnswer(d: { last_status_code: number | null; last_error: string | null }) {
  if (d.last_status_code !== null && !d.last_error) return <span class="code">{d.last_status_code}</span>;
  if (d.last_error) return <span class="problem">{d.last_error}</span>;
  return <span class="muted">not tried yet</span>;
}

export function Deliveries({ hook, asked }: { hook: Webhook; /** Changes when the deliveries should be read again. */ asked: number }) {
  const [filter, setFilter] = useState<Filter>("");
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const reread = useReread(
    () =>
      ok(
        hub.GET("/api/v1/projects/{id}/webhooks/{wid}/deliveries", {
          params: { path: { id: hook.project_id, wid: hook.id }, query: filter ? { status: filter } : {} },
        }),
      ),
    (r) => {
      setDeliveries(r.deliveries);
      setError(null);
    },
    setError,
  );
  useEffect(() => {
    setDeliveries(null);
    reread(0);
  }, [hook.id, filter]);
  useEffect(() => reread(), [asked]);
  useEffect(() => {
    if (deliveries?.some((d) => d.status === "pending")) reread(PENDING_POLL_MS);
  }, [deliveries]);

  const toggle = (id: string) => setOpen((current) => (current.has(id) ? new Set([...current].filter((x) => x !== id)) : new Set([...current, id])));

  return (
    <section class="deliveries" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries to {hook.url}</h2>
      <div class="filters">
        <label>
          Status
          <select name="delivery-status" value={filter} onChange={(e) => setFilter(e.currentTarget.value as Filter)}>
            <option value="">all</option>
            <option value="pending">pending</option>
            <option value="delivered">delivered</option>
            <option value="failed">failed</option>
          </select>
        </label>
        {deliveries && (
          <span class="muted" aria-live="polite">
            {`${deliveries.length} ${deliveries.length === 1 ? "delivery" : "deliveries"}${deliveries.length === 100 ? " (the newest 100)" : ""}`}
          </span>
        )}
      </div>
      <Problem message={error} />
      {deliveries === null && !error && <Loading what="deliveries" />}
      {deliveries && deliveries.length > 0 && (
        <DataTable
          class="deliveries-list"
          label={`Deliveries to ${hook.url}`}
          rows={deliveries}
          rowKey={(d) => d.id}
          rowAttributes={(d) => ({ "data-delivery-id": d.id, "data-status": d.status })}
          below={(d) =>
            open.has(d.id) && <AttemptLog hook={hook} deliveryId={d.id} version={[d.status, d.attempts, d.delivered_at, d.next_attempt_at].join()} />
          }
          columns={[
            {
              label: "Event",
              rowHeader: true,
              cell: (d) => (
                <>
                  <code>{d.event_type}</code>
                  {d.seq !== null && <span class="muted"> #{d.seq}</span>}
                </>
              ),
            },
            {
              label: "Status",
              cell: (d) => (
                <>
                  <span class={`status status-${d.status}`}>{d.status}</span>
                  {d.next_attempt_at && (
                    <div class="muted small">
                      next try <When iso={d.next_attempt_at} />
                    </div>
                  )}
                </>
              ),
            },
            {
              label: "Attempts",
              cell: (d) => (
                <>
                  {/* The hub counts the tries since the delivery was last sent; the log keeps every one. */}
                  {d.attempts}{" "}
                  <button type="button" class="link small" aria-expanded={open.has(d.id)} aria-label="Attempt log" onClick={() => toggle(d.id)}>
                    {open.has(d.id) ? "hide log" : "log"}
                  </button>
                </>
              ),
            },
            { label: "Last answer", cell: lastAnswer },
            { label: "Created", cell: (d) => <When iso={d.created_at} />, wideOnly: true },
            { label: "Delivered", cell: (d) => <When iso={d.delivered_at} /> },
            { label: "Send again", actions: true, cell: (d) => <Redeliver hook={hook} delivery={d} onRedelivered={() => reread(0)} /> },
          ]}
        />
      )}
      {deliveries?.length === 0 && <p class="muted">{filter ? `No ${filter} deliveries.` : "Nothing has been sent to this webhook yet: send a test."}</p>}
    </section>
  );
}

function Redeliver(props: { hook: Webhook; delivery: Delivery; onRedelivered: () => void }) {
  const { run, busy, problem } = useAction();
  const redeliver = () =>
    run("redeliver", async () => {
      await ok(
        hub.POST("/api/v1/projects/{id}/webhooks/{wid}/deliveries/{did}/redeliver", {
          params: { path: { id: props.hook.project_id, wid: props.hook.id, did: props.delivery.id } },
        }),
      );
      toast(`Sending ${props.delivery.event_type.replaceAll("_", " ")} again.`);
      props.onRedelivered();
    });
  return (
    <span class="action">
      <button type="button" class="secondary" disabled={busy !== null} aria-busy={busy !== null} onClick={() => void redeliver()}>
        Redeliver
      </button>
      {problem("redeliver")}
    </span>
  );
}

/** Every attempt at one delivery, redeliveries included; read again whenever the delivery changes. */
function AttemptLog({ hook, deliveryId, version }: { hook: Webhook; deliveryId: string; version: string }) {
  const [attempts, setAttempts] = useState<DeliveryAttempt[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void ok(
      hub.GET("/api/v1/projects/{id}/webhooks/{wid}/deliveries/{did}", { params: { path: { id: hook.project_id, wid: hook.id, did: deliveryId } } }),
    ).then(
      (r) => live && setAttempts(r.attempt_log),
      (e) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [hook.id, deliveryId, version]);
  if (error) return <Problem message={error} />;
  if (!attempts) return <Loading what="attempts" />;
  if (attempts.length === 0) return <p class="muted">Not tried yet.</p>;
  return (
    <ol class="attempt-log">
      {attempts.map((a) => (
        <li key={a.attempt} data-status-code={a.status_code ?? undefined}>
          <span class="badge">#{a.attempt}</span> <When iso={a.at} /> ·{" "}
          {a.status_code !== null ? <span class="code">{a.status_code}</span> : <span class="muted">no answer</span>} ·{" "}
          <span class="duration">{a.duration_ms} ms</span>
          {a.error && (
            <>
              {" "}
              · <span class="problem">{a.error}</span>
            </>
          )}
          {a.response_body && <pre class="response">{a.response_body}</pre>}
        </li>
      ))}
    </ol>
  );
}
