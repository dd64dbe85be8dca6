/** A moment as a person reads it (time-format.ts), machine-readable in `<time>`; a dash for none. */
import { absoluteTime } from "../time-format";

export const When = ({ iso }: { iso: string | null }) => (iso ? <time dateTime={iso}>{absoluteTime(iso)}</time> : <span class="muted">—</span>);
