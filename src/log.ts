/**
 * Failures are logged as one JSON line each, with what identifies them (the
 * request id a client was given, the project, the message) so that the line
 * a user quotes can be found. Never a body, a header or a secret.
 */
const described = (err: unknown) => (err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : { message: String(err) });

export function logError(msg: string, fields: Record<string, unknown>, err: unknown) {
  console.error(JSON.stringify({ level: "error", msg, ...fields, error: described(err) }));
}

/** What is worth a line when looking into a problem, and nothing more (debug level). */
export function logDebug(msg: string, fields: Record<string, unknown>) {
  console.debug(JSON.stringify({ level: "debug", msg, ...fields }));
}
