/** A task's code-review mark on its board card and its list row: small, with what it means as its title and label. */
import { FileSearch, FileX } from "lucide";
import { reviewMarkOf } from "../review-marks";
import type { Task } from "../types";
import { Icon } from "../ui/icon";

export function ReviewMark({ review }: { review: Task["review"] }) {
  const mark = reviewMarkOf(review);
  if (!mark) return null;
  return (
    <span class={`mark ${mark.kind}`} title={mark.title} aria-label={mark.title} role="img" data-review-mark={mark.kind}>
      <Icon icon={mark.kind === "in-review" ? FileSearch : FileX} size={13} />
      <span aria-hidden="true">{mark.text}</span>
    </span>
  );
}
