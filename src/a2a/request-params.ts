/** The parameters of an A2A request, checked: a malformed one is refused before anything is read. */
import { TaskState, type ListTasksRequest } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import type { TaskStatus } from "../domain/lifecycle";
import { statusesOf } from "./states";

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;
/** A date and a time, as ISO 8601 writes them (Date.parse alone takes "-1" for a year). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

export function historyLengthOf(n: number | undefined) {
  if (n !== undefined && (!Number.isInteger(n) || n < 0)) throw new RequestMalformedError("historyLength must be a non-negative integer");
  return n;
}

/** What ListTasks asks for: its page, and the hub's statuses of the A2A state it names (undefined: any). */
export function listParamsOf(params: ListTasksRequest): {
  pageSize: number;
  historyLength: number | undefined;
  updatedAfter: string | undefined;
  statuses: TaskStatus[] | undefined;
} {
  const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE)
    throw new RequestMalformedError(`pageSize must be between 1 and ${MAX_PAGE_SIZE}`);
  const historyLength = historyLengthOf(params.historyLength);
  let updatedAfter: string | undefined;
  if (params.statusTimestampAfter) {
    const at = ISO_TIME.test(params.statusTimestampAfter) ? Date.parse(params.statusTimestampAfter) : NaN;
    if (Number.isNaN(at)) throw new RequestMalformedError("statusTimestampAfter must be an ISO-8601 time (2026-01-31T12:00:00Z)");
    updatedAfter = new Date(at).toISOString();
  }
  if (!(params.status in TaskState) || params.status === TaskState.UNRECOGNIZED)
    throw new RequestMalformedError(
      `status must be one of ${Object.keys(TaskState)
        .filter((k) => k.startsWith("TASK_STATE_"))
        .join(", ")}`,
    );
  const statuses = params.status === TaskState.TASK_STATE_UNSPECIFIED ? undefined : statusesOf(params.status);
  return { pageSize, historyLength, updatedAfter, statuses };
}
