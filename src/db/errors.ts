/** D1 reports constraint failures only through the error message. */
export const isUniqueViolation = (e: unknown) => e instanceof Error && /UNIQUE constraint failed/.test(String(e.message) + String(e.cause ?? ""));
