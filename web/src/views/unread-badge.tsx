/** The inbox's unread count beside its link in the navigation (and, through the count, in the tab's title). */
import { useInboxCount } from "../inbox-watch";

export function UnreadBadge() {
  const count = useInboxCount();
  if (!count || count.unread === 0) return null;
  return (
    <span class="unread-count" aria-label={`${count.unread} unread`}>
      {count.unread}
    </span>
  );
}
