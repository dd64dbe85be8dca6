/**
 * Text cut to a length, for services that count UTF-16 units and refuse
 * what is not valid Unicode (Telegram answers 400 to a lone surrogate, and
 * the message is lost).
 */

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

/**
 * At most `max` UTF-16 units of `text`, `ellipsis` included when it was cut.
 * The cut falls between code points, never inside a surrogate pair, and a
 * lone surrogate the text brought with it becomes U+FFFD: the result is
 * always well-formed.
 */
export function cutText(text: string, max: number, ellipsis = ""): string {
  if (text.length <= max) return text.toWellFormed();
  let end = Math.max(0, max - ellipsis.length);
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  return `${text.slice(0, end).toWellFormed()}${ellipsis}`;
}
