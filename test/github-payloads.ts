/**
 * GitHub webhook payloads as GitHub documents them (docs.github.com "Webhook events and payloads"; the shapes of
 * octokit/webhooks' payload examples), trimmed to the fields a reader of them would look at, with their real nesting.
 */
const user = (login: string, id = 21031067) => ({
  login,
  id,
  node_id: "MDQ6VXNlcjIxMDMxMDY3",
  avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
  html_url: `https://github.com/${login}`,
  type: "User",
  site_admin: false,
});

export const repository = {
  id: 186853002,
  node_id: "MDEwOlJlcG9zaXRvcnkxODY4NTMwMDI=",
  name: "Hello-World",
  full_name: "Codertocat/Hello-World",
  private: false,
  owner: user("Codertocat"),
  html_url: "https://github.com/Codertocat/Hello-World",
  url: "https://api.github.com/repos/Codertocat/Hello-World",
  default_branch: "main",
};

const label = (name: string) => ({
  id: 1362934389,
  node_id: "MDU6TGFiZWwxMzYyOTM0Mzg5",
  url: `https://api.github.com/repos/Codertocat/Hello-World/labels/${name}`,
  name,
  color: "d73a4a",
  default: false,
  description: null,
});

const issue = (number: number, title: string, body: string | null, labels: string[], pullRequest = false) => ({
  url: `https://api.github.com/repos/Codertocat/Hello-World/issues/${number}`,
  repository_url: "https://api.github.com/repos/Codertocat/Hello-World",
  html_url: `https://github.com/Codertocat/Hello-World/${pullRequest ? "pull" : "issues"}/${number}`,
  id: 444500041 + number,
  node_id: "MDU6SXNzdWU0NDQ1MDAwNDE=",
  number,
  title,
  user: user("Codertocat"),
  labels: labels.map(label),
  state: "open",
  locked: false,
  assignee: null,
  assignees: [],
  milestone: null,
  comments: 0,
  created_at: "2026-05-15T15:20:18Z",
  updated_at: "2026-05-15T15:20:18Z",
  closed_at: null,
  author_association: "OWNER",
  active_lock_reason: null,
  body,
  ...(pullRequest
    ? {
        pull_request: {
          url: `https://api.github.com/repos/Codertocat/Hello-World/pulls/${number}`,
          html_url: `https://github.com/Codertocat/Hello-World/pull/${number}`,
          diff_url: `https://github.com/Codertocat/Hello-World/pull/${number}.diff`,
          patch_url: `https://github.com/Codertocat/Hello-World/pull/${number}.patch`,
          merged_at: null,
        },
      }
    : {}),
});

/** `issues` with `action: labeled`: `label` is the label just added. */
export const issueLabeled = (o: { number: number; title: string; body?: string | null; label: string }) => ({
  action: "labeled",
  issue: issue(o.number, o.title, o.body ?? null, [o.label]),
  label: label(o.label),
  repository,
  sender: user("Codertocat"),
});

/** `issue_comment` with `action: created`, on a pull request when `onPullRequest` (its `issue` carries `pull_request`). */
export const commentCreated = (o: { number: number; title: string; comment: string; by: string; onPullRequest?: boolean }) => ({
  action: "created",
  issue: issue(o.number, o.title, "", [], o.onPullRequest ?? false),
  comment: {
    url: "https://api.github.com/repos/Codertocat/Hello-World/issues/comments/492700400",
    html_url: `https://github.com/Codertocat/Hello-World/${o.onPullRequest ? "pull" : "issues"}/${o.number}#issuecomment-492700400`,
    issue_url: `https://api.github.com/repos/Codertocat/Hello-World/issues/${o.number}`,
    id: 492700400,
    node_id: "MDEyOklzc3VlQ29tbWVudDQ5MjcwMDQwMA==",
    user: user(o.by, 7),
    created_at: "2026-05-15T15:20:21Z",
    updated_at: "2026-05-15T15:20:21Z",
    author_association: "MEMBER",
    body: o.comment,
    performed_via_github_app: null,
  },
  repository,
  sender: user(o.by, 7),
});

/** `pull_request` with `action: opened`: `head.ref` is the branch it would merge. */
export const pullRequestOpened = (o: { number: number; title: string; body: string | null; branch: string; by: string }) => ({
  action: "opened",
  number: o.number,
  pull_request: {
    url: `https://api.github.com/repos/Codertocat/Hello-World/pulls/${o.number}`,
    id: 279147437,
    node_id: "MDExOlB1bGxSZXF1ZXN0Mjc5MTQ3NDM3",
    html_url: `https://github.com/Codertocat/Hello-World/pull/${o.number}`,
    diff_url: `https://github.com/Codertocat/Hello-World/pull/${o.number}.diff`,
    number: o.number,
    state: "open",
    locked: false,
    title: o.title,
    user: user(o.by, 9),
    body: o.body,
    created_at: "2026-05-15T15:20:33Z",
    updated_at: "2026-05-15T15:20:33Z",
    closed_at: null,
    merged_at: null,
    draft: false,
    head: { label: `Codertocat:${o.branch}`, ref: o.branch, sha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821", user: user("Codertocat"), repo: repository },
    base: { label: "Codertocat:main", ref: "main", sha: "f95f852bd8fca8fcc58a9a2d6c842781e32a215e", user: user("Codertocat"), repo: repository },
    author_association: "OWNER",
    merged: false,
    comments: 0,
    commits: 1,
    additions: 1,
    deletions: 1,
    changed_files: 1,
  },
  repository,
  sender: user(o.by, 9),
});

/** GitHub's `ping`, sent once when the webhook is added. */
export const ping = (hookId = 109948940) => ({
  zen: "Non-blocking is better than blocking.",
  hook_id: hookId,
  hook: { type: "Repository", id: hookId, name: "web", active: true, events: ["issues", "issue_comment", "pull_request"], config: { content_type: "json" } },
  repository,
  sender: user("Codertocat"),
});
