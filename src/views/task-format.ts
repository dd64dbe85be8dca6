/** Tasks in task-format's words (seeds/task-format.md §Task Response), as `?format=task-format` answers them. */
import { z } from "zod";
import { TASK_FORMAT_STATUSES, taskFormatResponse } from "../protocol/task-format";
import { json, jsonObject, timestamp } from "./fields";
import { errorBlockSchema, taskPageSchema, type TaskView } from "./tasks";

export const taskFormatResponseSchema = z
  .object({
    id: z.string().meta({ description: "The request's `id` (the hub's task id for a task not made by a task-format request)" }),
    status: z.enum(TASK_FORMAT_STATUSES),
    result: jsonObject.nullable().optional().meta({ description: "Only when completed" }),
    error: errorBlockSchema.optional().meta({ description: "Only when failed" }),
    metadata: z
      .looseObject({
        startedAt: timestamp.optional(),
        completedAt: timestamp.optional(),
        duration_ms: z.int().optional(),
        agent: z.string().optional().meta({ description: "The assigned server's name" }),
        retryCount: z.int(),
      })
      .meta({ description: "What the hub knows of the task, over the metadata the agent's Task Response sent (kept as sent)" }),
    artifacts: z.array(json).meta({ description: "The artifacts the agent's Task Response sent; else the result's artifacts, when completed" }),
  })
  .meta({ id: "TaskFormatResponse" });

export const taskFormatPageSchema = taskPageSchema.extend({ tasks: z.array(taskFormatResponseSchema) });

/** A task as the task-format response, held to its schema. */
export const taskFormatView = (view: TaskView): z.infer<typeof taskFormatResponseSchema> => taskFormatResponse(view);
