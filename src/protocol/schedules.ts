/** Request bodies of schedules (API.md "Templates, schedules and triggers"): a template fired on cron slots in a time zone. */
import { z } from "zod";
import { MISSED_POLICIES, OVERLAP_POLICIES } from "../domain/automation-kinds";
import { label, uuid } from "../http/fields";
import { parametersBody } from "./templates";

const fields = {
  template_id: uuid.meta({ description: "A template of the project: what each slot makes" }),
  name: label(200).nullish(),
  cron: z
    .string("must be a string")
    .trim()
    .min(1, "must not be empty")
    .max(200, "must be at most 200 characters")
    .meta({ description: "Five fields (minute hour day-of-month month day-of-week), e.g. `0 2 * * *`, or a nickname such as `@daily`" }),
  timezone: z.string("must be a string").max(100, "must be at most 100 characters").meta({ description: "IANA time zone the expression is read in" }),
  missed: z.enum(MISSED_POLICIES, "must be skip or run_once").meta({
    description: "A slot the room woke more than five minutes late for: `skip` records it skipped; `run_once` fires the latest one once",
  }),
  overlap: z.enum(OVERLAP_POLICIES, "must be skip or allow").meta({
    description: "While the previous firing's graph has a task not finished: `skip` records the slot skipped; `allow` fires anyway",
  }),
  paused: z.boolean("must be true or false").meta({ description: "A paused schedule fires nothing; resuming starts from the next slot after now" }),
};

export const createScheduleBody = z
  .strictObject({
    template_id: fields.template_id,
    name: fields.name,
    cron: fields.cron,
    timezone: fields.timezone.default("UTC"),
    parameters: parametersBody.meta({ description: "Given to every firing, checked against the template's parameters as saved" }),
    missed: fields.missed.default("skip"),
    overlap: fields.overlap.default("skip"),
    paused: fields.paused.default(false),
  })
  .meta({ id: "CreateSchedule" });

export const changeScheduleBody = z
  .strictObject({
    template_id: fields.template_id.optional(),
    name: fields.name,
    cron: fields.cron.optional(),
    timezone: fields.timezone.optional(),
    parameters: z.record(z.string(), z.unknown(), { error: "must be an object" }).optional(),
    missed: fields.missed.optional(),
    overlap: fields.overlap.optional(),
    paused: fields.paused.optional(),
  })
  .meta({ id: "ChangeSchedule" });
