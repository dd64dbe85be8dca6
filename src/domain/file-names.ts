/**
 * The name a file is sent to a session's machine under. The daemon writes it into its uploads folder as given
 * (hub.py `_upload_dest_dir() / filename`), so a name must stay a single plain name there on every system it runs on.
 */

/** The longest name most file systems take, in bytes of UTF-8. */
export const MAX_FILENAME_BYTES = 255;

/** Control characters (C0, DEL, C1). */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** Why a file name is refused, or null for a plain name. */
export function plainFilenameError(name: string): string | null {
  if (name.length === 0) return "must not be empty";
  if (new TextEncoder().encode(name).byteLength > MAX_FILENAME_BYTES) return `must be at most ${MAX_FILENAME_BYTES} bytes of UTF-8`;
  if (CONTROL_CHARACTER.test(name)) return "must not contain control characters (CR, LF, tab, NUL, …)";
  if (!name.isWellFormed()) return "must not contain a lone UTF-16 surrogate";
  // ':' names a drive or a stream on Windows, where the daemon may run.
  if (/[/\\:]/.test(name)) return "must be a plain file name: no '/', '\\' or ':'";
  if (name.includes("..") || name === ".") return "must not be '.' or contain '..'";
  return null;
}
