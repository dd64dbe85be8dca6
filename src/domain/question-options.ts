/**
 * The answers an agent's question offers, as people are shown them (the inbox, Telegram's buttons): `options` is kept
 * as the agent sent it, a list of strings or of `{label}` / `{value}` objects; anything else offers none.
 */
export const MAX_OPTIONS = 8;

export function optionLabels(options: unknown): string[] {
  if (!Array.isArray(options)) return [];
  return options
    .map((o) =>
      typeof o === "string" ? o : o && typeof o === "object" ? String((o as Record<string, unknown>).label ?? (o as Record<string, unknown>).value ?? "") : "",
    )
    .filter((label) => label !== "")
    .slice(0, MAX_OPTIONS);
}

/** What answering a tool approval says, whichever surface it is answered on. */
export const APPROVED = "approved";
export const REJECTED = "rejected";
