/** A refusal of the hub, in A2A's words: the error the SDK answers for a problem document or a route's answer. */
import { RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { Problem } from "../http/problem";

/** A refusal of a hub route, in A2A's words. */
export function a2aErrorOf(status: number, detail: string, cancelling = false, code?: string): Error {
  if (code === "TASK_ID_TAKEN") return new RequestMalformedError(`message.messageId already names another message of this project: ${detail}`);
  if (status === 404) return new TaskNotFoundError(detail);
  if (status === 409 && cancelling) return new TaskNotCancelableError(detail);
  if (status === 400 || status === 413 || status === 422) return new RequestMalformedError(detail);
  if (status < 500) return new UnsupportedOperationError(detail);
  return new Error(detail);
}

type FieldErrors = readonly { path: string; message: string }[];
/** Field errors in one line of an A2A error's message. */
export const fieldsText = (errors: FieldErrors) => errors.map((e) => `${e.path}: ${e.message}`).join("; ");
export const problemText = (p: { detail?: string; errors?: FieldErrors }) =>
  [p.detail ?? "refused", ...(p.errors?.length ? [fieldsText(p.errors)] : [])].join("; ");

/** Runs hub work, answering its refusals as A2A errors. */
export async function asA2A<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof Problem) throw a2aErrorOf(e.status, problemText(e), false, e.code);
    throw e;
  }
}
