/**
 * GitHub repository events a trigger answers (API.md "Templates, schedules and triggers"): which deliveries fire it,
 * and the template parameters read from the event.
 */
export const GITHUB_EVENTS = ["issues.labeled", "issue_comment.created", "pull_request.opened"] as const;
export type GithubEvent = (typeof GITHUB_EVENTS)[number];

export interface GithubTriggerRule {
  /** `<X-GitHub-Event>.<action>` names it fires on. */
  events: GithubEvent[];
  /** For issues.labeled: only this label fires it. */
  label?: string | null;
  /** For issue_comment.created: only a comment starting with this command (e.g. "/agent") fires it. */
  command?: string | null;
  /** Per template parameter, a dotted path into the event's payload (`{"title": "issue.title"}`). */
  mapping?: Record<string, string>;
}
