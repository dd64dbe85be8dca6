/** The hub's validation refusal (problem+json `errors`, each naming a field by its dotted path) split by the form field it concerns. */
import { ApiError, messageOf } from "../api";

export interface Refusal<F extends string> {
  fields: Partial<Record<F, string>>;
  /** What names no field of the form (or the whole refusal when it names none). */
  other: string | null;
}

/**
 * Each error goes to the most precise field of `known` its path lies under (`requirements.languages.0` under
 * `requirements.languages` before `requirements`), after dropping `strip` from its front; the rest is one message.
 */
export function refusalOf<F extends string>(e: unknown, known: readonly F[], strip?: RegExp): Refusal<F> {
  const fields: Partial<Record<F, string>> = {};
  const rest: string[] = [];
  const errors = e instanceof ApiError ? (e.problem.errors ?? []) : [];
  const byLength = [...known].sort((a, b) => b.length - a.length);
  for (const { path, message } of errors) {
    const p = strip ? path.replace(strip, "") : path;
    const field = byLength.find((k) => p === k || p.startsWith(`${k}.`));
    if (!field) rest.push(`${path}: ${message}`);
    else fields[field] = `${fields[field] ? `${fields[field]}; ` : ""}${p === field ? "" : `${p.slice(field.length + 1)}: `}${message}`;
  }
  return { fields, other: errors.length === 0 ? messageOf(e) : rest.length ? rest.join("; ") : null };
}

/** A refusal shown beside the field it names. */
export function FieldProblem({ field, message }: { field: string; message: string | undefined }) {
  return message ? (
    <span class="problem small" role="alert" data-field-problem={field}>
      {message}
    </span>
  ) : null;
}

/** A refusal of a request about one part of a form (a dependency added on its own) as one naming that part's field. */
export function underField(e: unknown, field: string): unknown {
  if (!(e instanceof ApiError)) return e;
  const errors = e.problem.errors?.map((x) => ({ ...x, path: `${field}.${x.path}` })) ?? [{ path: field, message: e.message }];
  return new ApiError(e.status, { ...e.problem, errors });
}
