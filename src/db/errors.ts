/** D1 reports failures only through the error message (and its cause). */
export const errorMentions = (e: unknown, text: string) => e instanceof Error && `${e.message} ${String(e.cause ?? "")}`.includes(text);

export const isUniqueViolation = (e: unknown) => errorMentions(e, "UNIQUE constraint failed");
export const isForeignKeyViolation = (e: unknown) => errorMentions(e, "FOREIGN KEY constraint failed");
