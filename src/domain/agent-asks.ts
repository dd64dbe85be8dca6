/**
 * How one agent's question to another (`ask_agent`) and its answer read where the agents find them: typed or queued by
 * the daemon, and as notes of their tasks, which the daemon's MCP `notes://inbox` serves.
 */

/** The question, saying on the same line how to answer it (hub.py shows only the question, not its id). */
export const askedQuestion = (question: string, interventionId: string) =>
  `${question} (answer it: orchestratia intervention respond ${interventionId} --response "…")`;

/** The note the asked session's current task gets: as hub.py queues the question (`[ask from <source>] …`). */
export const questionNote = (source: string, question: string, interventionId: string) => `[ask from ${source}] ${askedQuestion(question, interventionId)}`;

/** The note the asking task gets: the answer, naming the question it answers (`ask_agent` returned its id). */
export const answerNote = (by: string, interventionId: string, response: string) => `[answer from ${by} to question ${interventionId}] ${response}`;

/** `via` of a note_added that records an ask or its answer: the daemon already hears of it by its own push. */
export const ASK_NOTE_VIA = ["ask", "answer"] as const;
