/**
 * The palette's ranking: every word typed must be found in an item's label (or be the start of its id); an item
 * whose label is the query, or starts with it, or has a word starting with it, comes before one that merely contains it.
 */
import type { ItemKind, PaletteItem } from "./palette-items";

/** Between items that match as well, pages and projects (few, and what a person most often wants) come first. */
const KIND_ORDER: Record<ItemKind, number> = { page: 0, project: 1, task: 2, session: 3, server: 4 };

/** How well one typed word matches a label: 0 when it is not in it. */
function wordScore(label: string, word: string): number {
  if (label === word) return 100;
  if (label.startsWith(word)) return 80;
  const at = label.indexOf(word);
  if (at < 0) return 0;
  // The start of a word in the label ("health" in "code health") beats the middle of one.
  return /[\s\-_/.:·(]/.test(label[at - 1]!) ? 60 : 40;
}

/** The item's score for the query (higher is better), or null when it does not match. */
export function scoreOf(item: PaletteItem, query: string): number | null {
  const q = query.trim().toLowerCase();
  if (!q) return 0;
  const label = item.label.toLowerCase();
  // An id typed (or pasted) from its start: the task's id, at least 4 characters of it.
  if (item.id && q.length >= 4 && item.id.startsWith(q)) return 90;
  let total = 0;
  for (const word of q.split(/\s+/)) {
    const score = wordScore(label, word);
    if (score === 0) return null;
    total += score;
  }
  // The whole query as it was typed, found in the label, beats its words found apart.
  return total + (label.includes(q) ? 20 : 0);
}

/** The items that match, best first (ties keep their kind's order, then the shorter label), at most `limit`. */
export function rank(items: PaletteItem[], query: string, limit = 50): PaletteItem[] {
  // Nothing typed yet: the items in the order given (the pages first).
  if (!query.trim()) return items.slice(0, limit);
  const scored: { item: PaletteItem; score: number; at: number }[] = [];
  items.forEach((item, at) => {
    const score = scoreOf(item, query);
    if (score !== null) scored.push({ item, score, at });
  });
  scored.sort((a, b) => b.score - a.score || KIND_ORDER[a.item.kind] - KIND_ORDER[b.item.kind] || a.item.label.length - b.item.label.length || a.at - b.at);
  return scored.slice(0, limit).map((s) => s.item);
}
