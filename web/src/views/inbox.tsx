/**
 * What waits on the person across their projects: questions, help requests and approvals agents asked, plans to
 * review, and agents' tasks to approve, each answerable in place. Opening the inbox marks what it shows seen.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { Schemas } from "../../../client";
import { hub, messageOf, ok } from "../api";
import { landInboxCount, useInboxCount } from "../inbox-watch";
import { notificationsState, turnOffNotifications, turnOnNotifications } from "../notifications";
import { Empty, Loading } from "../ui/states";
import { Problem } from "./controls";
import { InboxEntry } from "./inbox-item";
import "./inbox.css";

const REFRESH_MS = 10_000;

export function Inbox() {
  const count = useInboxCount();
  const [box, setBox] = useState<Schemas["Inbox"] | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The items that were unread when this visit showed them: marked new until the page is left. */
  const fresh = useRef(new Set<string>());
  const focus = new URLSearchParams(location.search).get("item");

  const load = async () => {
    try {
      const read = await ok(hub.GET("/api/v1/inbox"));
      read.items.forEach((i) => i.unread && fresh.current.add(i.id));
      setBox(read);
      setError(null);
      const newest = read.items[0]?.asked_at;
      if (read.unread > 0 && newest) landInboxCount(await ok(hub.POST("/api/v1/inbox/seen", { body: { until: newest } })));
    } catch (e) {
      setError(messageOf(e));
    }
  };
  useEffect(() => {
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  // Read again whenever something new arrives (the count's newest item changes).
  useEffect(() => void load(), [count?.newest_at]);
  useEffect(() => {
    if (focus && box) document.getElementById(`item-${focus}`)?.scrollIntoView({ block: "center" });
  }, [focus, box !== null]);

  return (
    <section class="inbox">
      <div class="inbox-head">
        <h1>Inbox</h1>
        <NotificationsToggle />
      </div>
      <Problem message={error} />
      {!box && !error && <Loading what="the inbox" />}
      {box?.items.length === 0 && <Empty title="Nothing waits on you.">No questions, plans or tasks to approve.</Empty>}
      <div class="inbox-items">
        {box?.items.map((item) => (
          <InboxEntry key={item.id} item={item} fresh={fresh.current.has(item.id)} focused={item.id === focus} onDone={load} />
        ))}
      </div>
    </section>
  );
}

/** Browser notifications of new questions, plans and tasks to approve, asked for only when the person turns them on. */
function NotificationsToggle() {
  const [state, setState] = useState(notificationsState);
  if (state === "unsupported") return <p class="muted small">This browser cannot show notifications.</p>;
  if (state === "blocked") return <p class="muted small">Notifications are blocked for this site in the browser's settings.</p>;
  return state === "on" ? (
    <p class="notifications small">
      Notifications are on.{" "}
      <button type="button" class="link" onClick={() => setState(turnOffNotifications())}>
        Turn off notifications
      </button>
    </p>
  ) : (
    <p class="notifications small">
      <button type="button" onClick={() => void turnOnNotifications().then(setState)}>
        Turn on notifications
      </button>{" "}
      <span class="muted">of questions, plans and tasks to approve in projects you can answer in</span>
    </p>
  );
}
