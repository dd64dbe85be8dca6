/**
 * A2A messages and tasks as the hub's tasks: what a message asks becomes a task's fields, and a task (with its
 * questions and answers) is read back as an A2A task. Pure: no I/O.
 */
import { Message, Role, type Artifact, type Part, type Task, type TaskStatus } from "@a2a-js/sdk";
import { ContentTypeNotSupportedError, RequestMalformedError } from "@a2a-js/sdk/errors";
import type { TaskView, InterventionRow } from "../views/tasks";
import { INPUT_MODES } from "./card";
import { a2aStateOf } from "./states";

/** A message is a task's input, held to the inline limit of a task-format payload: larger inputs go as DataRefs or file URLs. */
export const MAX_MESSAGE_BYTES = 64 * 1024;
const TITLE_LENGTH = 120;

const TASK_SPEC = "orchestratia/task-spec/";
const REQUIREMENTS = "orchestratia/requirements/";

export interface TaskFields {
  title: string;
  spec: string;
  structuredSpec: Record<string, unknown> | null;
  requirements: Record<string, unknown>;
  /** The message as it came (proto JSON), kept as the task's payload. */
  payload: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const schemaOf = (v: unknown) => (isObject(v) && typeof v.$schema === "string" ? v.$schema : "");

export const textOf = (message: Message) =>
  message.parts
    .flatMap((p) => (p.content?.$case === "text" ? [p.content.value] : []))
    .join("\n\n")
    .trim();

const dataParts = (message: Message) => message.parts.flatMap((p) => (p.content?.$case === "data" ? [p.content.value as unknown] : []));

/** The capabilities a message asks for: `metadata.skills`, the ids of the card's skills. */
function skillsOf(message: Message): string[] {
  const skills = message.metadata?.skills;
  if (skills === undefined) return [];
  if (!Array.isArray(skills) || !skills.every((s) => typeof s === "string" && s.trim() !== ""))
    throw new RequestMalformedError("message.metadata.skills must be a list of skill ids from the agent card");
  return skills;
}

/** The checks every message gets, new task or follow-up. */
export function checkMessage(message: Message | undefined): Message {
  if (!message) throw new RequestMalformedError("message is required");
  if (!message.messageId) throw new RequestMalformedError("message.messageId is required");
  if (message.role === Role.ROLE_AGENT) throw new RequestMalformedError("message.role must be ROLE_USER: a client's message is the user's");
  if (message.parts.length === 0) throw new RequestMalformedError("message.parts must hold at least one part");
  // Text and data parts are read whatever they are labelled; a file's bytes are the agents' to read, in a type the card names.
  for (const [i, part] of message.parts.entries()) {
    const media = part.mediaType.split(";", 1)[0]!.trim().toLowerCase();
    const file = part.content?.$case === "raw" || part.content?.$case === "url";
    if (file && media && !INPUT_MODES.includes(media))
      throw new ContentTypeNotSupportedError(`message.parts[${i}] is ${part.mediaType}: this agent takes ${INPUT_MODES.join(" and ")}`);
  }
  const size = new TextEncoder().encode(JSON.stringify(Message.toJSON(message))).length;
  if (size > MAX_MESSAGE_BYTES)
    throw new RequestMalformedError(`message is ${size} bytes of JSON; at most ${MAX_MESSAGE_BYTES} are taken (send large inputs as file URLs)`);
  return message;
}

/**
 * A new task from a message: its text parts are the spec (the first line, the title), a data part holding an
 * orchestratia/task-spec/v1 is the structured spec (its first requirement titles a task sent without text), one holding orchestratia/requirements/v1 (with the skills the
 * message names as capabilities) routes it. A task with no requirements is offered to any agent that can take it.
 */
export function taskFieldsOf(message: Message): TaskFields {
  const data = dataParts(message);
  const structuredSpec = (data.find((d) => schemaOf(d).startsWith(TASK_SPEC)) as Record<string, unknown> | undefined) ?? null;
  const sentRequirements = (data.find((d) => schemaOf(d).startsWith(REQUIREMENTS)) as Record<string, unknown> | undefined) ?? {};
  const spec = textOf(message);
  if (!spec && !structuredSpec) throw new RequestMalformedError(`message.parts must hold a text part, or a data part holding an ${TASK_SPEC}v1 object`);
  const skills = skillsOf(message);
  const sentCapabilities = Array.isArray(sentRequirements.capabilities) ? (sentRequirements.capabilities as string[]) : [];
  const requirements = skills.length ? { ...sentRequirements, capabilities: [...new Set([...sentCapabilities, ...skills])] } : sentRequirements;
  const firstRequirement = Array.isArray(structuredSpec?.requirements) ? (structuredSpec.requirements[0] as { description?: unknown } | undefined) : undefined;
  const described = typeof firstRequirement?.description === "string" ? firstRequirement.description : "";
  const firstLine =
    (spec || described)
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.trim() ?? "";
  return {
    title: firstLine.slice(0, TITLE_LENGTH) || `A2A request ${message.messageId.slice(0, 40)}`,
    spec,
    structuredSpec,
    requirements,
    payload: Message.toJSON(message) as Record<string, unknown>,
  };
}

// ── reading a task back ─────────────────────────────────────────────────────

export const textPart = (text: string): Part => ({ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" });
const dataPart = (value: unknown): Part => ({ content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" });

/** The conversation a task belongs to: its conversationId, or the task alone when it was made without one. */
export const contextIdOf = (task: Pick<TaskView, "id" | "context">) =>
  typeof task.context?.conversationId === "string" ? task.context.conversationId : task.id;

function agentMessage(task: TaskView, messageId: string, parts: Part[]): Message {
  return { messageId, contextId: contextIdOf(task), taskId: task.id, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** Questions put to people (not those an agent asked another session, which do not hold the task). */
const forPeople = (interventions: readonly InterventionRow[]) => interventions.filter((i) => i.targetSessionId === null);

/** The question a task in input required waits on: its newest open question to people. */
export const openQuestion = (interventions: readonly InterventionRow[]) =>
  forPeople(interventions)
    .filter((i) => i.status === "pending")
    .at(-1);

/** What the agent says with the task's status: the result's summary, the failure, the open question or the plan to review. */
export function statusMessage(task: TaskView, interventions: readonly InterventionRow[]): Message | undefined {
  const id = (what: string) => `${task.id}:${what}`;
  switch (task.status) {
    case "done": {
      const summary = typeof task.result?.summary === "string" ? task.result.summary : "";
      return summary ? agentMessage(task, id("result"), [textPart(summary)]) : undefined;
    }
    case "failed": {
      const why = task.error?.message ?? (typeof task.result?.error === "string" ? task.result.error : "");
      return why ? agentMessage(task, id(`failure-${task.retry_count}`), [textPart(why)]) : undefined;
    }
    case "needs_human": {
      const question = openQuestion(interventions);
      return question ? agentMessage(task, `${question.id}:question`, [textPart(question.question)]) : undefined;
    }
    case "plan_review":
      return agentMessage(task, id(`plan-${task.updated_at}`), [
        textPart("Review the plan: reply approve to start the work, or say what to change."),
        dataPart(task.plan),
      ]);
    default:
      return undefined;
  }
}

export function statusOf(task: TaskView, interventions: readonly InterventionRow[]): TaskStatus {
  return { state: a2aStateOf(task.status), message: statusMessage(task, interventions), timestamp: task.updated_at };
}

/** A finished task's contracts, one artifact each: its data (a text part for a string), its status as the description. */
export function artifactsOf(task: TaskView): Artifact[] {
  if (task.status !== "done") return [];
  const contracts = task.result?.contracts;
  if (!isObject(contracts)) return [];
  return Object.entries(contracts).map(([key, entry]) => {
    const e = isObject(entry) ? entry : { data: entry };
    const data = "data" in e ? e.data : null;
    const status = typeof e.status === "string" ? e.status : "fulfilled";
    return {
      artifactId: key,
      name: key,
      description: status,
      parts: [typeof data === "string" ? textPart(data) : dataPart(data)],
      metadata: { status, ...(typeof e.reason === "string" ? { reason: e.reason } : {}) },
      extensions: [],
    };
  });
}

/** The conversation so far: the client's first message, then each question the task asked and the answer it got. */
export function historyOf(task: TaskView, interventions: readonly InterventionRow[]): Message[] {
  const sent = task.payload && typeof task.payload.messageId === "string" ? Message.fromJSON(task.payload) : undefined;
  const first: Message = sent ?? {
    messageId: `${task.id}:spec`,
    contextId: contextIdOf(task),
    taskId: task.id,
    role: Role.ROLE_USER,
    parts: [textPart(task.spec || task.title)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const history = [{ ...first, taskId: task.id, contextId: contextIdOf(task) }];
  for (const i of forPeople(interventions)) {
    history.push(agentMessage(task, `${i.id}:question`, [textPart(i.question)]));
    if (i.response !== null) history.push({ ...agentMessage(task, `${i.id}:answer`, [textPart(i.response)]), role: Role.ROLE_USER });
  }
  return history;
}

const camelKeys = (o: object) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), v]));

/** The hub's task as an A2A task; `historyLength` keeps the newest messages (0: none; absent: all). */
export function a2aTaskOf(task: TaskView, interventions: readonly InterventionRow[], historyLength?: number): Task {
  const history = historyOf(task, interventions);
  return {
    id: task.id,
    contextId: contextIdOf(task),
    status: statusOf(task, interventions),
    artifacts: artifactsOf(task),
    history: historyLength === undefined ? history : historyLength === 0 ? [] : history.slice(-historyLength),
    metadata: {
      title: task.title,
      status: task.status,
      // Field names in camelCase, as every name in A2A's JSON is (spec 5.5).
      assignedServerName: task.assigned_server_name,
      createdAt: task.created_at,
      // What the agents reported using on it: the same totals as the task's `usage`.
      ...(task.usage ? { usage: camelKeys(task.usage) } : {}),
    },
  };
}
