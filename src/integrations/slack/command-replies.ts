/**
 * What `/orc` and the buttons answer privately (pure): Slack mrkdwn in Block Kit sections, with their text as the
 * fallback. Every piece of text from elsewhere (titles, names, errors) is escaped (&, <, >, which Slack reads as markup:
 * links, mentions) and then cut, so one section stays under Slack's 3,000 characters as Slack counts them.
 */
import { cutText } from "../../domain/text";
import { WAITING_ON_PEOPLE, type ListedTask } from "../chat/listed-task";
import { escapedCut, MAX_SECTION } from "./notifications";
import type { EphemeralReply } from "./response-url";

/** Longest names in a list line. */
const MAX_LISTED_NAME = 80;
/** Longest name in a heading (a task's title). */
const MAX_NAME = 200;
/** Longest piece quoted (a result's summary, an error): quoting adds a `>` a line, and the reply's other lines fit beside it. */
const MAX_QUOTE = 1000;

/** Text from elsewhere, escaped and cut to `max` as Slack counts it. */
export const named = (text: string, max = MAX_NAME) => escapedCut(text, max);

/** Text from elsewhere as a quote, each line marked. */
export const quoted = (text: string, max = MAX_QUOTE) => `>${escapedCut(text, max).replace(/\n/g, "\n>")}`;

/** Lines under a heading, packed into as many sections as Slack's 3,000 characters a section need. */
function sectionsOf(heading: string, lines: readonly string[]): string[] {
  const out: string[] = [];
  let current = heading;
  for (const line of lines) {
    if (current.length + 1 + line.length > MAX_SECTION) {
      out.push(current);
      current = line;
    } else current = `${current}\n${line}`;
  }
  return [...out, current];
}

const short = (id: string) => id.slice(0, 8);

const section = (text: string) => ({ type: "section", text: { type: "mrkdwn", text } });

/** A reply of one mrkdwn section. */
export const said = (text: string): EphemeralReply => ({ text, blocks: [section(text)] });

export const HELP = [
  "*Orchestratia* in Slack: `/orc &lt;command&gt;`",
  "• `/orc tasks`: open tasks of the projects this channel posts (else all of yours), those that need a person first",
  "• `/orc task &lt;id prefix&gt;`: one task, with a link to it",
  "• `/orc watch &lt;project&gt;`: this channel posts the project's questions, plans, failures and more; again to stop",
  "• `/orc mute`: this channel posts nothing (or again, posts again)",
  "• `/orc run &lt;template&gt; [name=value …]`: start a template's graph (quote names with spaces; project/template when several have it)",
  "• `/orc link &lt;code&gt;`: link your Slack user to your hub account",
  "• `/orc help`: this",
  "Buttons on the channel's messages answer questions, approve plans and tasks, and retry failures, as you with your role.",
].join("\n");

export const NOT_LINKED =
  "Your Slack user is not linked to an active Orchestratia account. In the hub, open *Account*, choose *Link Slack*, then type `/orc link &lt;code&gt;` here with the code it gives.";

/** `/orc tasks`: the open tasks listed (those waiting on a person first, as given), and how many more there are. */
export function openTaskReply(tasks: readonly ListedTask[], total: number, where: string): EphemeralReply {
  if (tasks.length === 0) return said(`No open tasks in ${where}.`);
  const line = (t: ListedTask) =>
    `\`${short(t.id)}\` ${named(t.title, MAX_LISTED_NAME)} · _${t.awaiting_approval ? "awaiting approval" : t.status}_ · ${named(t.project, MAX_LISTED_NAME)}`;
  const needsPerson = (t: ListedTask) => WAITING_ON_PEOPLE.includes(t.status) || t.awaiting_approval === 1;
  const waiting = tasks.filter(needsPerson);
  const others = tasks.filter((t) => !needsPerson(t));
  const more = total - tasks.length;
  const parts = [
    ...(waiting.length ? sectionsOf("*Needs a person*", waiting.map(line)) : []),
    ...(others.length ? sectionsOf("*Running and waiting*", others.map(line)) : []),
    ...(more > 0 ? [`…and ${more} more open ${more === 1 ? "task" : "tasks"} (see the dashboard)`] : []),
  ];
  return { text: `Open tasks in ${where}`, blocks: [section(`Open tasks in ${where}`), ...parts.map(section)] };
}

export interface TaskFacts {
  id: string;
  title: string;
  status: string;
  priority: string;
  project: string;
  server: string | null;
  /** The result's summary, or the failure's error. */
  outcome: string | null;
}

/** `/orc task <prefix>`: one task and a link to it on the dashboard. */
export function taskReply(t: TaskFacts, url: string): EphemeralReply {
  const text = [
    `*<${url}|${named(t.title)}>*`,
    `${named(t.project)} · ${t.status} · ${t.priority}${t.server ? ` · on ${named(t.server)}` : ""}`,
    `\`${t.id}\``,
    ...(t.outcome ? ["", quoted(t.outcome)] : []),
  ].join("\n");
  return { text: `${cutText(t.title, MAX_NAME, "…")} (${t.status})`, blocks: [section(text)] };
}

/** The projects a `/orc mute` changed, named. */
export const projectNames = (names: readonly string[]) => names.map((n) => `*${named(n, MAX_LISTED_NAME)}*`).join(", ");
