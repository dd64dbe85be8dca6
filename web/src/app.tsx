/** The app: restores the session from the refresh cookie, then shows the page the path names. */
import { useEffect, useState } from "preact/hooks";
import { hub, ok, onSignedOut, resumeSignIn } from "./api";
import { MeContext } from "./me";
import { linkProps, useRoute } from "./router";
import { Keyboard } from "./ui/keyboard";
import { Sidebar } from "./ui/sidebar";
import { Empty } from "./ui/states";
import { Toasts } from "./ui/toasts";
import type { Me } from "./types";
import { Activity } from "./views/activity";
import { Inbox } from "./views/inbox";
import { AcceptInvite } from "./views/invite-accept";
import { lazy } from "./views/lazy";
import { NewTaskPage } from "./views/new-task";
import { Projects } from "./views/projects";
import { SessionPage } from "./views/session";
import { Sessions } from "./views/sessions";
import { SignIn } from "./views/sign-in";
import { TaskPage } from "./views/task";
import { viewOf } from "./views/view-switch";

/** The graph view and its layout library load only when a graph is opened. */
const LazyBoard = lazy(() => import("./views/board").then((m) => m.Board), "the board");
const LazyGraph = lazy(() => import("./views/graph").then((m) => m.GraphView), "the graph");
/** The code health page, its chart library, and (later still) the module graph's renderer load only when it is opened. */
const LazyCodeHealth = lazy(() => import("./views/code-health").then((m) => m.CodeHealth), "code health");
/** The Usage page and its chart library. */
const LazyUsage = lazy(() => import("./views/usage").then((m) => m.UsagePage), "the usage page");
/** The approval rules and the permission log are pages of their own, seldom the first one opened. */
const LazyRules = lazy(() => import("./views/rules").then((m) => m.Rules), "the rules");
const LazyPermissions = lazy(() => import("./views/permissions").then((m) => m.Permissions), "the permission log");
const LazyServerPage = lazy(() => import("./views/server").then((m) => m.ServerPage), "the server");
const LazyPeople = lazy(() => import("./views/people").then((m) => m.People), "the people");
const LazyConnect = lazy(() => import("./views/connect").then((m) => m.Connect), "the connect page");
const LazyAccount = lazy(() => import("./views/account").then((m) => m.Account), "your account");
const LazyOverview = lazy(() => import("./views/project-overview").then((m) => m.ProjectOverview), "the overview");
const LazyUsageAll = lazy(() => import("./views/usage-all").then((m) => m.UsageAll), "usage");
/** The list view of a project's tasks and its virtualiser. */
const LazyTaskList = lazy(() => import("./views/task-list").then((m) => m.TaskList), "the list");
const LazyAccess = lazy(() => import("./views/access").then((m) => m.Access), "the access grants");
const LazyAgents = lazy(() => import("./views/agents").then((m) => m.Agents), "the agents");
const LazyMembers = lazy(() => import("./views/members").then((m) => m.Members), "the members");
const LazySettings = lazy(() => import("./views/project-settings").then((m) => m.ProjectSettingsPage), "the settings");
/** Templates, schedules, triggers and runs (and, later still, the JSON editor and cron in words). */
const LazyAutomation = lazy(() => import("./views/automation").then((m) => m.Automation), "automation");
const LazySlack = lazy(() => import("./views/slack-settings").then((m) => m.SlackSettings), "the Slack settings");
const LazyWebhooks = lazy(() => import("./views/webhooks").then((m) => m.Webhooks), "the webhooks");

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const route = useRoute();

  useEffect(() => {
    // A reload keeps the person signed in: the refresh cookie gives a new access token.
    void (async () => setMe((await resumeSignIn()) === "ok" ? await ok(hub.GET("/api/v1/auth/me")).catch(() => null) : null))();
    return onSignedOut(() => setMe(null));
  }, []);

  // An invite link is opened before its person has an account.
  if (route.page === "invite") return <AcceptInvite onSignedIn={setMe} />;
  if (me === undefined) return <p class="loading">Loading…</p>;
  if (me === null) return <SignIn onSignedIn={setMe} />;
  return (
    <MeContext.Provider value={me}>
      <div class="shell">
        <Sidebar route={route} />
        <main class="page">
          {route.page === "projects" && <Projects />}
          {route.page === "board" &&
            (viewOf(location.search) === "list" ? <LazyTaskList projectId={route.projectId} /> : <LazyBoard projectId={route.projectId} />)}
          {route.page === "graph" && <LazyGraph projectId={route.projectId} />}
          {route.page === "code-health" && <LazyCodeHealth projectId={route.projectId} />}
          {route.page === "usage" && <LazyUsage projectId={route.projectId} />}
          {route.page === "new-task" && <NewTaskPage projectId={route.projectId} />}
          {route.page === "task" && <TaskPage projectId={route.projectId} taskId={route.taskId} />}
          {route.page === "activity" && <Activity projectId={route.projectId} />}
          {route.page === "sessions" && <Sessions projectId={route.projectId} />}
          {route.page === "session" && <SessionPage projectId={route.projectId} sessionId={route.sessionId} />}
          {route.page === "permissions" && <LazyPermissions projectId={route.projectId} />}
          {route.page === "members" && <LazyMembers projectId={route.projectId} />}
          {route.page === "settings" && <LazySettings projectId={route.projectId} />}
          {route.page === "connect" && <LazyConnect projectId={route.projectId} />}
          {route.page === "webhooks" && <LazyWebhooks projectId={route.projectId} webhookId={route.webhookId} />}
          {route.page === "automation" && <LazyAutomation projectId={route.projectId} section={route.section} />}
          {route.page === "inbox" && <Inbox />}
          {route.page === "agents" && <LazyAgents />}
          {route.page === "server" && <LazyServerPage serverId={route.serverId} />}
          {route.page === "rules" && <LazyRules />}
          {route.page === "access" && <LazyAccess />}
          {route.page === "people" && <LazyPeople />}
          {route.page === "slack" && <LazySlack />}
          {route.page === "account" && <LazyAccount />}
          {route.page === "overview" && <LazyOverview projectId={route.projectId} />}
          {route.page === "usage-all" && <LazyUsageAll />}
          {route.page === "not-found" && (
            <Empty title="There is no page at this address.">
              <a {...linkProps("/")}>Your projects</a>
            </Empty>
          )}
        </main>
      </div>
      <Keyboard route={route} />
      <Toasts />
    </MeContext.Provider>
  );
}
