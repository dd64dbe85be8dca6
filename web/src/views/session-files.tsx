/**
 * Files between a person and a session's machine: drop (or pick) a file to send it, with its progress, then the
 * path the daemon wrote it at; ask for a file by path, then a link to it once the daemon sent it (or why not); and
 * the session's recent transfers, read again whenever one of its file events arrives.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok, uploadToSession } from "../api";
import { useCanWrite } from "../me";
import { useReread } from "../project-feed";
import type { FileDownload, FileUpload, HubEvent } from "../types";
import { Problem } from "./controls";
import { absoluteTime } from "../time-format";

interface Sending {
  name: string;
  sent: number;
  total: number;
}

type Transfer = { kind: "upload"; at: string; upload: FileUpload } | { kind: "download"; at: string; download: FileDownload };

const sizeOf = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

export function SessionFiles({ projectId, sessionId, events }: { projectId: string; sessionId: string; events: HubEvent[] }) {
  const canWrite = useCanWrite();
  const path = { id: projectId, sid: sessionId };
  const [uploads, setUploads] = useState<FileUpload[]>([]);
  const [downloads, setDownloads] = useState<FileDownload[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState<Sending | null>(null);
  const [sendError, setSendError] = useState<string | null>(null);
  const [fetchError, setFetchError] = useState<string | null>(null);
  const [wanted, setWanted] = useState("");
  const [dragging, setDragging] = useState(false);
  const reread = useReread(
    () =>
      Promise.all([
        ok(hub.GET("/api/v1/projects/{id}/sessions/{sid}/uploads", { params: { path } })),
        ok(hub.GET("/api/v1/projects/{id}/sessions/{sid}/downloads", { params: { path } })),
      ]),
    ([u, d]) => {
      setUploads(u.uploads);
      setDownloads(d.downloads);
      setError(null);
    },
    setError,
  );
  useEffect(() => reread(0), [projectId, sessionId]);
  useEffect(() => {
    if (events.length > 0) reread();
  }, [events]);

  const send = async (file: File) => {
    setSendError(null);
    setSending({ name: file.name, sent: 0, total: file.size });
    try {
      const upload = await uploadToSession(projectId, sessionId, file, (sent, total) => setSending({ name: file.name, sent, total }));
      setUploads((current) => [upload, ...current.filter((u) => u.id !== upload.id)]);
    } catch (e) {
      setSendError(messageOf(e));
    } finally {
      setSending(null);
      reread();
    }
  };

  const ask = async (e: Event) => {
    e.preventDefault();
    setFetchError(null);
    try {
      const download = await ok(hub.POST("/api/v1/projects/{id}/sessions/{sid}/downloads", { params: { path }, body: { path: wanted } }));
      setDownloads((current) => [download, ...current.filter((d) => d.id !== download.id)]);
      setWanted("");
    } catch (err) {
      setFetchError(messageOf(err));
    }
  };

  const transfers: Transfer[] = [
    ...uploads.map((upload): Transfer => ({ kind: "upload", at: upload.created_at, upload })),
    ...downloads.map((download): Transfer => ({ kind: "download", at: download.created_at, download })),
  ].sort((a, b) => b.at.localeCompare(a.at));

  return (
    <section class="session-files" aria-label="Files">
      <h3>Files</h3>
      {canWrite && (
        <div class="file-actions">
          <div
            class={`drop-zone${dragging ? " dragging" : ""}`}
            data-testid="drop-zone"
            onDragOver={(e) => {
              e.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={(e) => {
              e.preventDefault();
              setDragging(false);
              const file = e.dataTransfer?.files[0];
              if (file && !sending) void send(file);
            }}
          >
            <p>Drop a file here to send it to the machine (at most 100 MiB), or</p>
            <label class="pick">
              <span>Choose a file</span>
              <input
                type="file"
                aria-label="Choose a file to send"
                disabled={sending !== null}
                onChange={(e) => {
                  const input = e.currentTarget;
                  const file = input.files?.[0];
                  input.value = "";
                  if (file) void send(file);
                }}
              />
            </label>
            {sending && (
              <p class="sending" role="status">
                Sending {sending.name}: <progress max={sending.total || 1} value={sending.sent} /> {Math.floor((100 * sending.sent) / (sending.total || 1))}%
              </p>
            )}
            <Problem message={sendError} />
          </div>
          <form class="fetch-file" onSubmit={(e) => void ask(e)}>
            <label>
              Fetch a file from the machine (at most 10 MiB){" "}
              <input type="text" name="path" placeholder="~/project/build.log" value={wanted} onInput={(e) => setWanted(e.currentTarget.value)} required />
            </label>
            <button type="submit" disabled={wanted.trim() === ""}>
              Fetch
            </button>
            <Problem message={fetchError} />
          </form>
        </div>
      )}
      <Problem message={error} />
      {transfers.length === 0 ? (
        <p class="meta">No files have moved to or from this session yet.</p>
      ) : (
        <table class="transfers">
          <caption>Recent transfers</caption>
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Status</th>
              <th scope="col">Where</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            {transfers.map((t) =>
              t.kind === "upload" ? <UploadRow key={t.upload.id} upload={t.upload} /> : <DownloadRow key={t.download.id} download={t.download} />,
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}

const When = ({ at }: { at: string }) => (
  <td>
    <time dateTime={at}>{absoluteTime(at)}</time>
  </td>
);

function UploadRow({ upload }: { upload: FileUpload }) {
  return (
    <tr data-transfer={upload.id} data-status={upload.status}>
      <td>
        ↑ {upload.filename} <span class="meta">{sizeOf(upload.size)}</span>
      </td>
      <td>
        <span class={`status transfer-${upload.status}`}>{upload.status === "pending" ? "waiting for the machine" : upload.status}</span>
      </td>
      <td>
        {upload.path && (
          <>
            landed at <code class="landed">{upload.path}</code>
          </>
        )}
        {upload.error && <span class="problem">{upload.error}</span>}
      </td>
      <When at={upload.created_at} />
    </tr>
  );
}

function DownloadRow({ download }: { download: FileDownload }) {
  return (
    <tr data-transfer={download.id} data-status={download.status}>
      <td>
        ↓ <code>{download.path}</code>
      </td>
      <td>
        <span class={`status transfer-${download.status}`}>{download.status === "pending" ? "waiting for the machine" : download.status}</span>
      </td>
      <td>
        {download.url && (
          <a href={download.url} download={download.filename}>
            Download {download.filename} ({sizeOf(download.size ?? 0)})
          </a>
        )}
        {download.status === "ready" && !download.url && <span class="meta">ready ({sizeOf(download.size ?? 0)})</span>}
        {download.error && <span class="problem">{download.error}</span>}
      </td>
      <When at={download.created_at} />
    </tr>
  );
}
