/**
 * Which field of an input is wrong and why: the shape of `errors` in problem
 * documents and in agent socket errors, whoever found the mistake.
 */
import type { z } from "zod";

export interface FieldError {
  path: string;
  message: string;
}

export function zodFieldErrors(error: z.ZodError, prefix = ""): FieldError[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
    return { path: path || "(body)", message: issue.message };
  });
}
