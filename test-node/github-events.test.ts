/** Which GitHub deliveries fire a trigger's rule, and the template parameters read from them (src/domain/github-events.ts). */
import { describe, expect, it } from "vitest";
import { commandArgs, githubFiring, valueAt, type GithubTriggerRule } from "../src/domain/github-events";

const declared = ["title", "body", "url", "number", "branch", "author", "label", "args", "repo"].map((name) => ({
  name,
  type: name === "number" ? "number" : "string",
}));

const repository = { full_name: "Codertocat/Hello-World" };
const issue = {
  number: 1,
  title: "Spelling error in the README file",
  body: "It says committ.",
  html_url: "https://github.com/Codertocat/Hello-World/issues/1",
  user: { login: "Codertocat" },
};
const labeled = (name: string) => ({ action: "labeled", issue, label: { name }, repository });
const comment = (body: string) => ({
  action: "created",
  issue: { ...issue, pull_request: { url: "https://api.github.com/repos/Codertocat/Hello-World/pulls/1" } },
  comment: { body, html_url: "https://github.com/Codertocat/Hello-World/pull/1#issuecomment-2", user: { login: "hubot" } },
  repository,
});
const opened = {
  action: "opened",
  number: 2,
  pull_request: {
    number: 2,
    title: "Update the README",
    body: null,
    html_url: "https://github.com/Codertocat/Hello-World/pull/2",
    user: { login: "octocat" },
    head: { ref: "readme-update", label: "Codertocat:readme-update" },
  },
  repository,
};

const rule = (r: Partial<GithubTriggerRule>): GithubTriggerRule => ({ events: ["issues.labeled", "issue_comment.created", "pull_request.opened"], ...r });

describe("a GitHub delivery", () => {
  it("gives an issue's title, body, url, number, author, label and repo when labelled", () => {
    expect(githubFiring(rule({}), "issues", labeled("agent"), declared)).toEqual({
      fire: true,
      event: "issues.labeled",
      parameters: {
        title: "Spelling error in the README file",
        body: "It says committ.",
        url: "https://github.com/Codertocat/Hello-World/issues/1",
        number: 1,
        author: "Codertocat",
        label: "agent",
        repo: "Codertocat/Hello-World",
      },
    });
  });

  it("fires for the rule's label only, and for the events it names only", () => {
    expect(githubFiring(rule({ label: "agent" }), "issues", labeled("bug"), declared)).toEqual({ fire: false, ignored: 'the label added is not "agent"' });
    expect(githubFiring(rule({ events: ["pull_request.opened"] }), "issues", labeled("agent"), declared)).toEqual({
      fire: false,
      ignored: "the trigger does not take issues.labeled (it takes pull_request.opened)",
    });
    expect(githubFiring(rule({}), "issues", { ...labeled("agent"), action: "unlabeled" }, declared).fire).toBe(false);
    expect(githubFiring(rule({}), "push", { ref: "refs/heads/main" }, declared).fire).toBe(false);
  });

  it("takes a comment starting with the command, its text after it as args, and its author and link", () => {
    const fired = githubFiring(rule({ command: "/agent" }), "issue_comment", comment("/agent  fix the typo\nplease"), declared);
    expect(fired).toMatchObject({
      fire: true,
      parameters: {
        title: issue.title,
        number: 1,
        author: "hubot",
        args: "fix the typo\nplease",
        url: "https://github.com/Codertocat/Hello-World/pull/1#issuecomment-2",
      },
    });
    expect(githubFiring(rule({ command: "/agent" }), "issue_comment", comment("thanks! /agent"), declared).fire).toBe(false);
    expect(githubFiring(rule({ command: "/agent" }), "issue_comment", comment("/agentic"), declared).fire).toBe(false);
    expect(commandArgs("/agent", "/agent")).toBe("");
    expect(commandArgs(null, "/agent")).toBeNull();
  });

  it("gives a pull request's branch, and leaves out what it lacks so the template's default stands", () => {
    const fired = githubFiring(rule({}), "pull_request", opened, declared);
    expect(fired).toEqual({
      fire: true,
      event: "pull_request.opened",
      parameters: {
        title: "Update the README",
        url: "https://github.com/Codertocat/Hello-World/pull/2",
        number: 2,
        branch: "readme-update",
        author: "octocat",
        repo: "Codertocat/Hello-World",
      },
    });
  });

  it("reads a mapping's dotted paths, as the declared type where it can, and gives only parameters the template declares", () => {
    const only = [
      { name: "ref", type: "string" },
      { name: "pr", type: "string" },
      { name: "n", type: "number" },
      { name: "ask", type: "string" },
    ];
    const fired = githubFiring(
      rule({ mapping: { ref: "pull_request.head.label", pr: "number", n: "pull_request.title", ask: "command.args" } }),
      "pull_request",
      opened,
      only,
    );
    expect(fired).toEqual({ fire: true, event: "pull_request.opened", parameters: { ref: "Codertocat:readme-update", pr: "2", n: "Update the README" } });
    expect(valueAt({ a: [{ b: 1 }] }, "a.0.b")).toBe(1);
    expect(valueAt({ a: "x" }, "a.b")).toBeUndefined();
  });
});
