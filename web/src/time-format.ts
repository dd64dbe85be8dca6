/**
 * Absolute times as the dashboard shows them, in the person's time zone: today's as "14:05", this year's as
 * "2 Dec 14:05", older ones with their year, "2 Dec 2025 14:05". One format everywhere, so a time is never shown
 * without the day it belongs to and never with more than it needs.
 */
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

type Instant = string | number | Date;

const dateOf = (at: Instant) => (at instanceof Date ? at : new Date(at));
const pad = (n: number) => String(n).padStart(2, "0");
const sameDay = (a: Date, b: Date) => a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();

/** "2 Dec", or "2 Dec 2025" outside the current year. */
export function absoluteDate(at: Instant, now: Date = new Date()): string {
  const d = dateOf(at);
  const day = `${d.getDate()} ${MONTHS[d.getMonth()]}`;
  return d.getFullYear() === now.getFullYear() ? day : `${day} ${d.getFullYear()}`;
}

/** "14:05" today, "2 Dec 14:05" this year, "2 Dec 2025 14:05" before (or after) it. */
export function absoluteTime(at: Instant, now: Date = new Date()): string {
  const d = dateOf(at);
  if (Number.isNaN(d.getTime())) return "—";
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return sameDay(d, now) ? clock : `${absoluteDate(d, now)} ${clock}`;
}
