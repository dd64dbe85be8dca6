/**
 * `/run <template> [name=value ...]` as a person types it in a chat (Telegram's `/run`, Slack's `/orc run`): the
 * template's name (quoted when it has spaces, `project/template` when several projects have one of that name), then
 * parameters. Pure; the chat resolves the names. Errors are plain text: each chat escapes them for its markup.
 */

export interface RunRequest {
  /** The project's slug or name, when given as `project/template`. */
  project: string | null;
  template: string;
  /** As typed: the template's declared types read them (numbers, true/false). */
  parameters: Record<string, string>;
}

/** Words split on spaces, where "…", '…' and phones' “…” keep spaces inside one word. */
export function chatWords(text: string): string[] {
  const words: string[] = [];
  for (const m of text.matchAll(/([^\s"'“”‘’=]+=)?(?:"([^"]*)"|'([^']*)'|“([^”]*)”|‘([^’]*)’)|\S+/g)) {
    const quoted = m[2] ?? m[3] ?? m[4] ?? m[5];
    words.push(quoted === undefined ? m[0] : `${m[1] ?? ""}${quoted}`);
  }
  return words;
}

/** How the command is typed, for the errors: `usage` is the chat's spelling of it. */
export function parseRunCommand(text: string, usage = "/run <template> [name=value …]"): RunRequest | { error: string } {
  const [first, ...rest] = chatWords(text.trim());
  if (!first) return { error: `Which template? ${usage}` };
  const slash = first.indexOf("/");
  const parameters: Record<string, string> = {};
  for (const word of rest) {
    const eq = word.indexOf("=");
    if (eq <= 0) return { error: `“${word}” is not name=value: ${usage}` };
    parameters[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return slash > 0 ? { project: first.slice(0, slash), template: first.slice(slash + 1), parameters } : { project: null, template: first, parameters };
}
