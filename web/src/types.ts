/**
 * What the dashboard reads from the hub, as the hub's description has it
 * (client/): a field the description lacks is a compile error where it is read.
 */
import type { ClientPathsWithMethod, MethodResponse } from "openapi-fetch";
import type { HubClient, Schemas } from "../../client";

/** The answer of a GET, as described. */
type Got<P extends ClientPathsWithMethod<HubClient, "get">> = MethodResponse<HubClient, "get", P>;

export type Problem = Schemas["Problem"];
export type Me = Schemas["User"];
export type Role = Me["role"];
export type Project = Schemas["Project"];
/** A project as read on its own: with the seq of its last event, where a live view follows it from. */
export type ProjectHead = Got<"/api/v1/projects/{id}">;
export type Member = Got<"/api/v1/projects/{id}/members">["members"][number];
export type Invite = Schemas["Invite"];
export type NewInvite = Schemas["NewInvite"];
export type InvitePreview = Schemas["InvitePreview"];

export type Task = Schemas["Task"];
export type AgentLog = Schemas["AgentLog"];
export type TaskStatus = Task["status"];
/** A task as a task-format request reads it (`format=task-format`); the dashboard never asks for it. */
type TaskFormatResponse = Schemas["TaskFormatResponse"];
/** A server that could take a task, with its score and reasons. */
export type Match = Got<"/api/v1/tasks/{id}/matching-agents">["servers"][number];
export type Intervention = Schemas["Intervention"];

/** A server agents run on, as people list them (with its load and open sessions). */
export type Server = Got<"/api/v1/servers">["servers"][number];
/** A server on its own page: with its current tasks. */
export type ServerPage = Got<"/api/v1/servers/{id}">;
export type Capabilities = NonNullable<Server["capabilities"]>;
export type Session = Schemas["Session"];
export type SessionStatus = Session["status"];

export type TelegramLink = Got<"/api/v1/auth/me/telegram">;
export type McpClient = Schemas["McpClient"];
export type TelegramLinkCode = MethodResponse<HubClient, "post", "/api/v1/auth/me/telegram-link">;
export type BotSetup = MethodResponse<HubClient, "post", "/api/v1/telegram/setup">;
export type IssuedToken = MethodResponse<HubClient, "post", "/api/v1/servers/tokens">;

export type Webhook = Schemas["Webhook"];
export type WebhookWithSecret = Schemas["WebhookWithSecret"];
export type Delivery = Schemas["WebhookDelivery"];
export type DeliveryStatus = Delivery["status"];
export type DeliveryAttempt = Schemas["WebhookDeliveryAttempt"];

/**
 * An event as the dashboard handles it. The dashboard's own shape: the live
 * socket's frame (not in the description, which covers HTTP only) names the
 * event's type `event_type`, as the log's `type` is the frame's; events read
 * from the log are brought to it by `fromLog`.
 */
export type HubEvent = Omit<Schemas["Event"], "type" | "data"> & { event_type: string; data: Record<string, unknown> };

export const fromLog = (e: Schemas["Event"]): HubEvent => {
  const { type, data, ...rest } = e;
  return { ...rest, event_type: type, data: data !== null && typeof data === "object" ? (data as Record<string, unknown>) : {} };
};

/**
 * The hub's own tasks of a task read or list: its answer is described as
 * either shape (by `format`), and without `format` it is always the hub's.
 */
export const isTask = (t: Task | TaskFormatResponse): t is Task => "project_id" in t;
export const tasksOf = (page: { tasks: (Task | TaskFormatResponse)[] }): Task[] => page.tasks.filter(isTask);

export type ApprovalRule = Schemas["ApprovalRule"];
export type RulePreview = Schemas["ApprovalRulePreview"];

/** A file sent to a session's machine, and one fetched from it. */
export type FileUpload = Schemas["FileUpload"];
export type FileDownload = Schemas["FileDownload"];
export type AccessGrant = Schemas["AccessGrant"];
export type ConnectToken = Schemas["ConnectToken"];

/** A project's code health: the newest snapshot's summary and each score before it. */
export type ProjectCodeHealth = Schemas["ProjectCodeHealth"];
export type CodeHealth = Schemas["CodeHealth"];
/** A session's working tree, as its daemon describes it. */
export type SessionFolder = Schemas["SessionFolder"];
export type FolderEntry = SessionFolder["entries"][number];
export type SessionFile = Schemas["SessionFile"];

export type PersonalToken = Schemas["PersonalAccessToken"];
export type IssuedPersonalToken = Schemas["IssuedPersonalAccessToken"];

/** What the agents used: a project's, broken down by day, model, agent or task; a task's with its graph's. */
export type ProjectUsage = Schemas["ProjectUsage"];
export type UsageRow = ProjectUsage["rows"][number];
export type TaskUsage = Schemas["TaskUsage"];

export type ReviewPolicy = Schemas["ReviewPolicy"];
export type ReviewPolicyBody = Schemas["ReviewPolicyBody"];
export type CodeReview = Schemas["CodeReview"];

export type SlackLink = Got<"/api/v1/auth/me/slack">;
export type SlackLinkCode = MethodResponse<HubClient, "post", "/api/v1/auth/me/slack-link">;
export type SlackInstallation = Schemas["SlackInstallation"];
export type SlackChannel = Schemas["SlackChannel"];
