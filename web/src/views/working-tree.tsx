/**
 * A session's working tree beside its terminal: its folders, read from the session's daemon as they are opened, and
 * a file opened in an editor (CodeMirror, loaded with the first file) that saves with the sha256 it was read with.
 * When the file changed on the machine meanwhile, both versions' times are shown and the person reloads the
 * machine's or overwrites it with theirs. Viewers, and files that are binary or not UTF-8, are read-only.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, hub, messageOf, ok } from "../api";
import { useCanWrite } from "../me";
import type { FolderEntry, SessionFile } from "../types";
import { Problem } from "./controls";
import { lazy } from "./lazy";
import { absoluteTime } from "../time-format";

const LazyEditor = lazy(() => import("./code-editor").then((m) => m.CodeEditor), "the editor");

interface Folder {
  entries?: FolderEntry[];
  truncated?: boolean;
  error?: string;
  open: boolean;
}

interface Opened {
  file: SessionFile;
  draft: string;
  /** Bumped when the text is read again, so the editor starts over from it. */
  version: number;
}

/** What the machine's file is now, when a save found it changed. */
interface Changed {
  sha256: string | null;
  mtime: number | null;
}

const join = (folder: string, name: string) => (folder === "" ? name : `${folder}/${name}`);
const timeOf = (mtime: number) => absoluteTime(mtime * 1000);

export function WorkingTree(props: { projectId: string; sessionId: string; root: string | null; children: ComponentChildren }) {
  const canWrite = useCanWrite();
  const params = { id: props.projectId, sid: props.sessionId };
  const [folders, setFolders] = useState<Record<string, Folder>>({});
  const [opened, setOpened] = useState<Opened | null>(null);
  const [changed, setChanged] = useState<Changed | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState<number | null>(null);

  const setFolder = (path: string, folder: Partial<Folder>) => setFolders((all) => ({ ...all, [path]: { ...(all[path] ?? { open: false }), ...folder } }));
  const list = async (path: string) => {
    setFolder(path, { open: true });
    try {
      const listing = await ok(hub.GET("/api/v1/projects/{id}/sessions/{sid}/fs", { params: { path: params, query: { path } } }));
      setFolder(path, { entries: listing.entries, truncated: listing.truncated, error: undefined });
    } catch (e) {
      setFolder(path, { error: messageOf(e) });
    }
  };
  useEffect(() => {
    setFolders({});
    setOpened(null);
    void list("");
  }, [props.projectId, props.sessionId]);

  const open = async (path: string) => {
    setError(null);
    setChanged(null);
    setSaved(null);
    try {
      const file = await ok(hub.GET("/api/v1/projects/{id}/sessions/{sid}/fs/file", { params: { path: params, query: { path } } }));
      setOpened((before) => ({ file, draft: file.content ?? "", version: (before?.version ?? 0) + 1 }));
    } catch (e) {
      setError(messageOf(e));
    }
  };

  /** Saves the draft, over the version whose sha256 is `expected` (none: whatever is there). */
  const save = async (expected: string | null) => {
    if (!opened) return;
    setSaving(true);
    setError(null);
    try {
      const written = await ok(
        hub.PUT("/api/v1/projects/{id}/sessions/{sid}/fs/file", {
          params: { path: params, query: { path: opened.file.path } },
          body: { content: opened.draft, expected_sha256: expected },
        }),
      );
      setOpened((now) => now && { ...now, file: { ...now.file, content: opened.draft, sha256: written.sha256, mtime: written.mtime, size: written.size } });
      setChanged(null);
      setSaved(written.mtime);
    } catch (e) {
      if (e instanceof ApiError && e.problem.code === "FILE_CHANGED") {
        const current = e.problem as { current_sha256?: unknown; current_mtime?: unknown };
        // Shown as text: anything but a string (or a number for the time) is shown as unknown.
        setChanged({
          sha256: typeof current.current_sha256 === "string" ? current.current_sha256 : null,
          mtime: typeof current.current_mtime === "number" ? current.current_mtime : null,
        });
      } else setError(messageOf(e));
    } finally {
      setSaving(false);
    }
  };

  const file = opened?.file;
  const editable = canWrite && file !== undefined && !file.binary && file.encoding === "utf-8";
  const dirty = opened !== null && file !== undefined && opened.draft !== (file.content ?? "");

  /** A symlink is followed: the daemon's stat says whether it leads to a folder or a file. */
  const follow = async (path: string) => {
    try {
      const target = await ok(hub.GET("/api/v1/projects/{id}/sessions/{sid}/fs/stat", { params: { path: params, query: { path } } }));
      if (target.type === "dir") void list(path);
      else void open(path);
    } catch (e) {
      setError(messageOf(e));
    }
  };

  // A function rather than a component: a component made here would be a new one at each render, and remount the tree.
  const entries = (path: string, depth: number) => {
    const folder = folders[path];
    if (!folder?.open) return null;
    if (folder.error) return <p class="problem tree-problem">{folder.error}</p>;
    if (!folder.entries) return <p class="loading">Reading…</p>;
    if (folder.entries.length === 0) return <p class="meta empty-folder">Empty folder</p>;
    return (
      <ul role={depth === 0 ? "tree" : "group"} aria-label={depth === 0 ? "Working tree" : undefined}>
        {folder.entries.map((entry) => {
          const at = join(path, entry.name);
          const expanded = folders[at]?.open === true;
          const isDir = entry.type === "dir" || (entry.type === "symlink" && folders[at] !== undefined);
          return (
            <li key={at} role="treeitem" aria-expanded={isDir ? Boolean(expanded) : undefined} aria-selected={file?.path === at}>
              <button
                type="button"
                class={`tree-entry ${entry.type}${file?.path === at ? " current" : ""}`}
                data-path={at}
                title={isDir ? undefined : `${entry.size} bytes, modified ${timeOf(entry.mtime)}`}
                onClick={() =>
                  isDir ? (expanded ? setFolder(at, { open: false }) : void list(at)) : entry.type === "symlink" ? void follow(at) : void open(at)
                }
              >
                <span aria-hidden="true">{isDir ? (expanded ? "▾ " : "▸ ") : entry.type === "symlink" ? "↪ " : "  "}</span>
                {entry.name}
              </button>
              {isDir && entries(at, depth + 1)}
            </li>
          );
        })}
        {folder.truncated && <li class="meta">More entries than the daemon lists (5000)</li>}
      </ul>
    );
  };

  return (
    <div class="workspace">
      <nav class="working-tree" aria-label="Files of the working directory">
        <h3>
          Working tree{" "}
          <button type="button" class="link" aria-label="Read the working tree again" onClick={() => void list("")}>
            ↻
          </button>
        </h3>
        {props.root && <p class="meta root">{props.root}</p>}
        {entries("", 0)}
      </nav>
      <div class="workspace-main">
        {opened && file && (
          <section class="file-editor" aria-label={`Editor of ${file.path}`}>
            <header class="editor-head">
              <code class="editor-path">{file.path}</code>
              <span class="meta">
                {file.size} bytes · modified {timeOf(file.mtime)}
                {!canWrite && " · read-only (viewers do not edit)"}
                {canWrite && file.encoding === "latin-1" && " · read-only (not UTF-8: saving would change its bytes)"}
              </span>
              {dirty && <span class="status dirty">edited</span>}
              {saved !== null && !dirty && (
                <span class="status saved" role="status">
                  Saved
                </span>
              )}
              {editable && (
                <button type="button" disabled={saving || !dirty} onClick={() => void save(file.sha256)}>
                  {saving ? "Saving…" : "Save"}
                </button>
              )}
              <button type="button" class="link" onClick={() => setOpened(null)}>
                Close
              </button>
            </header>
            {changed && (
              <div class="conflict" role="alert">
                <p>
                  <strong>{file.path} changed on the machine since you opened it.</strong>
                </p>
                <dl>
                  <dt>Your version</dt>
                  <dd>
                    opened as modified <time data-testid="mine-time">{timeOf(file.mtime)}</time>, with your edits
                  </dd>
                  <dt>The machine's</dt>
                  <dd>
                    {changed.mtime === null ? (
                      "deleted"
                    ) : (
                      <>
                        modified <time data-testid="theirs-time">{timeOf(changed.mtime)}</time>
                      </>
                    )}
                  </dd>
                </dl>
                <button type="button" onClick={() => void open(file.path)}>
                  Reload the machine's (drop your edits)
                </button>{" "}
                <button type="button" class="danger" onClick={() => void save(changed.sha256)}>
                  Overwrite it with yours
                </button>
              </div>
            )}
            <Problem message={error} />
            {file.binary ? (
              <p class="meta">A binary file ({file.size} bytes): not shown.</p>
            ) : (
              <LazyEditor
                key={`${file.path}#${opened.version}`}
                path={file.path}
                content={file.content ?? ""}
                readOnly={!editable}
                onChange={(draft: string) => setOpened((now) => now && { ...now, draft })}
                onSave={() => {
                  if (editable) void save(file.sha256);
                }}
              />
            )}
          </section>
        )}
        {!opened && <Problem message={error} />}
        {props.children}
      </div>
    </div>
  );
}
