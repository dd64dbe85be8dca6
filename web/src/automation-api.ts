/**
 * A project's templates and runs over the API (API.md "Templates, schedules and triggers"), through the typed client.
 * Answers and refusals are those of `ok`: the data, or an ApiError carrying the problem's fields.
 */
import { hub, ok } from "./api";
import type { Schemas } from "../../client";
import type { Template, TemplateBody } from "./template-draft";
import type { HubEvent } from "./types";

/** For a read no event changes (useLiveRead then reads once). */
export const NO_EVENTS: HubEvent[] = [];

export type Run = Schemas["Run"];
export type TemplateParameter = Schemas["TemplateParameter"];

const project = (id: string) => ({ params: { path: { id } } });
const template = (id: string, tid: string) => ({ params: { path: { id, tid } } });

export const listTemplates = async (projectId: string): Promise<Template[]> =>
  (await ok(hub.GET("/api/v1/projects/{id}/templates", project(projectId)))).templates;

export const readTemplate = (projectId: string, templateId: string) => ok(hub.GET("/api/v1/projects/{id}/templates/{tid}", template(projectId, templateId)));

export const createTemplate = (projectId: string, body: TemplateBody) => ok(hub.POST("/api/v1/projects/{id}/templates", { ...project(projectId), body }));

export const replaceTemplate = (projectId: string, templateId: string, body: TemplateBody) =>
  ok(hub.PUT("/api/v1/projects/{id}/templates/{tid}", { ...template(projectId, templateId), body }));

export const deleteTemplate = (projectId: string, templateId: string) =>
  ok(hub.DELETE("/api/v1/projects/{id}/templates/{tid}", template(projectId, templateId)));

/** The graph a task belongs to, as a template's tasks (nothing saved). */
export const draftFromTask = async (projectId: string, taskId: string) =>
  (await ok(hub.GET("/api/v1/projects/{id}/templates/draft", { params: { path: { id: projectId }, query: { task_id: taskId } } }))).tasks;

export const instantiate = (projectId: string, templateId: string, parameters: Record<string, unknown>) =>
  ok(hub.POST("/api/v1/projects/{id}/templates/{tid}/instantiate", { ...template(projectId, templateId), body: { parameters } }));

export interface RunFilter {
  template_id?: string;
  schedule_id?: string;
  trigger_id?: string;
}

export const RUNS_PAGE = 25;

export const listRuns = async (projectId: string, filter: RunFilter, before?: string): Promise<Run[]> =>
  (
    await ok(
      hub.GET("/api/v1/projects/{id}/runs", {
        params: { path: { id: projectId }, query: { ...filter, ...(before ? { before } : {}), limit: RUNS_PAGE } },
      }),
    )
  ).runs;

export type Schedule = Schemas["Schedule"];
export type NewSchedule = Schemas["CreateSchedule"];
export type ScheduleChange = Schemas["ChangeSchedule"];
export type Trigger = Schemas["Trigger"];
export type TriggerWithSecret = Schemas["TriggerWithSecret"];
export type NewTrigger = Schemas["CreateTrigger"];
export type GithubRule = Schemas["GithubTriggerRuleBody"];
export type GithubEvent = GithubRule["events"][number];

const schedule = (id: string, sid: string) => ({ params: { path: { id, sid } } });
const trigger = (id: string, tid: string) => ({ params: { path: { id, tid } } });

export const listSchedules = async (projectId: string): Promise<Schedule[]> =>
  (await ok(hub.GET("/api/v1/projects/{id}/schedules", project(projectId)))).schedules;

export const createSchedule = (projectId: string, body: NewSchedule) => ok(hub.POST("/api/v1/projects/{id}/schedules", { ...project(projectId), body }));

export const changeSchedule = (projectId: string, scheduleId: string, body: ScheduleChange) =>
  ok(hub.PATCH("/api/v1/projects/{id}/schedules/{sid}", { ...schedule(projectId, scheduleId), body }));

export const deleteSchedule = (projectId: string, scheduleId: string) =>
  ok(hub.DELETE("/api/v1/projects/{id}/schedules/{sid}", schedule(projectId, scheduleId)));

export const listTriggers = async (projectId: string): Promise<Trigger[]> => (await ok(hub.GET("/api/v1/projects/{id}/triggers", project(projectId)))).triggers;

export const createTrigger = (projectId: string, body: NewTrigger) => ok(hub.POST("/api/v1/projects/{id}/triggers", { ...project(projectId), body }));

export const changeTrigger = (projectId: string, triggerId: string, body: Schemas["UpdateTrigger"]) =>
  ok(hub.PATCH("/api/v1/projects/{id}/triggers/{tid}", { ...trigger(projectId, triggerId), body }));

export const rotateTriggerSecret = (projectId: string, triggerId: string) =>
  ok(hub.POST("/api/v1/projects/{id}/triggers/{tid}/secret", trigger(projectId, triggerId)));

export const deleteTrigger = (projectId: string, triggerId: string) => ok(hub.DELETE("/api/v1/projects/{id}/triggers/{tid}", trigger(projectId, triggerId)));
