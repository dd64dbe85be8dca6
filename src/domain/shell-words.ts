/**
 * Shell commands the hub composes for a daemon to run (hub.py `_handle_remote_exec` hands the text to
 * `asyncio.create_subprocess_shell`, which is `/bin/sh -c` on POSIX machines).
 */

/** A POSIX shell word that stands for exactly `text`: single-quoted, each `'` closed, escaped and reopened (`'\''`). */
export const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * `command` run from `directory`: the shell goes there first and runs nothing when it cannot (exit status 1, its
 * complaint on stderr). A line of its own, so a command of several lines runs there whole.
 */
export const fromDirectory = (directory: string, command: string) => `cd -- ${shellQuote(directory)} || exit 1\n${command}`;
