/**
 * A project's templates and runs over the API (API.md "Templates, schedules and triggers"), through the typed client.
 * Answers and refusals are those of `ok`: the data, or an ApiError carrying the problem's fields.
 */
import { hub, ok } from "./api";
import type { Schemas } from "../../client";
import type { Template, TemplateBody } from "./template-draft";

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
