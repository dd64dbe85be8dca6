/**
 * Agent-to-agent file transfer, relayed between two servers' links as
 * orchestratia_agent/file_transfer.py and hub.py speak it:
 *
 *   sender's CLI ─POST─▶ sender's link ─offerTransfer─▶ receiver's link ─file_offer─▶ receiving daemon
 *   receiving daemon ─file_accept─▶ … ─▶ sender's link ─file_accepted, file_send_start {file_path}─▶ sending daemon
 *   sending daemon ─file_chunk {index, data, total_chunks}… file_complete {total_chunks, sha256}─▶ sender's link ─▶ receiver
 *   receiving daemon ─file_ack {sha256_verified}─▶ sender's link ─file_ack─▶ sending daemon
 *
 * The sender's link owns the transfer: it checks each chunk's place and hashes
 * the bytes as they pass, and hands each chunk on at once (nothing is kept but
 * the running hash). The protocol has no acknowledgement per chunk, so the hub
 * cannot slow a sender down: a transfer whose chunks pile up on their way to
 * the receiver's link beyond RELAY_WINDOW_BYTES fails instead of growing the
 * link's memory. Out-of-order chunks, a sha256 that does not match, an error
 * from either daemon or either daemon leaving end it `failed` with the reason,
 * and both daemons are told (`file_error`).
 */
import { createHash, type Hash } from "node:crypto";
import type { RemoteUseEvent } from "../room/commands";
import type { DaemonPush } from "./pushes";

/** file_transfer.py CHUNK_SIZE: the bytes of one chunk. */
export const CHUNK_BYTES = 65_536;
/** Chunk frames on their way to the receiver's link, at most (about 64 chunks). */
export const RELAY_WINDOW_BYTES = 64 * 90_000;
/** A transfer that makes no progress this long fails (the CLI gives up after 300 s by default). */
export const TRANSFER_IDLE_MS = 300_000;
/** How long a finished transfer's status stays readable. */
export const TRANSFER_RETENTION_MS = 24 * 60 * 60 * 1000;

export const TRANSFER_STATUSES = ["pending", "accepted", "transferring", "completed", "failed", "rejected"] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];
const FINAL: readonly TransferStatus[] = ["completed", "failed", "rejected"];

/** What the CLI polls (`orchestratia file send`, `file status`). */
export interface TransferView {
  transfer_id: string;
  status: TransferStatus;
  filename: string;
  file_size: number;
  chunks_relayed: number;
  total_chunks: number;
  error: string | null;
}

/** What the sender's CLI asked for, with where it goes. */
export interface TransferRequest {
  transferId: string;
  projectId: string;
  filename: string;
  filePath: string;
  fileSize: number;
  sha256: string;
  /** The sending server, as the receiving daemon is told (`sender_session`) and the events name it. */
  senderServerId: string;
  senderName: string;
  receiver: { serverId: string; sessionId: string; sessionName: string };
}

/** What the receiver's link needs of a transfer. */
export interface TransferOffer {
  transferId: string;
  senderServerId: string;
  filename: string;
  fileSize: number;
  sha256: string;
  senderName: string;
  sessionId: string;
}

/** Either link of a transfer, as the other reaches it (over RPC, or itself when both sessions are on one server). */
export interface TransferPeer {
  offerTransfer(offer: TransferOffer): Promise<boolean>;
  /** `ends`: the frame ends the transfer (a `file_error`), after which the receiver's link forgets it. */
  toReceiver(transferId: string, frame: string, ends?: boolean): Promise<void>;
  fromReceiver(transferId: string, frame: Record<string, unknown>): Promise<void>;
}

/** What the transfers need of their link. */
export interface TransferPort {
  toDaemon(frame: DaemonPush): boolean;
  peer(serverId: string): TransferPeer;
  record(projectId: string, event: RemoteUseEvent, data: Record<string, unknown>): Promise<void>;
  storage: DurableObjectStorage;
  scheduleAlarm(at: number): Promise<void>;
}

interface Outgoing {
  request: TransferRequest;
  view: TransferView;
  /** The receiver's link, one stub for the whole transfer: calls on one stub arrive in the order they were made. */
  receiver: TransferPeer;
  hash: Hash;
  bytes: number;
  inFlightBytes: number;
  lastActivity: number;
}

const KEY = "transfer:";
const MAX_ENDED_REMEMBERED = 1000;
const totalChunksOf = (size: number) => Math.ceil(size / CHUNK_BYTES);
const idOf = (frame: Record<string, unknown>) => (typeof frame.transfer_id === "string" ? frame.transfer_id : "");

export class FileTransfers {
  /** Transfers this link's daemon sends. */
  private readonly outgoing = new Map<string, Outgoing>();
  /** Transfers this link's daemon receives: the sending server of each. */
  private readonly incoming = new Map<string, string>();
  /** Transfers that ended lately: the chunks a daemon still sends for one are dropped quietly. */
  private readonly ended = new Set<string>();
  /** The most chunk bytes this link has had on their way to a receiver's link at once (the bench reads it). */
  peakInFlightBytes = 0;

  constructor(private readonly port: TransferPort) {}

  // ── The sending side ─────────────────────────────────────────────────────

  /** Offers the file to the receiving daemon; false when that daemon is not connected (nothing is kept then). */
  async start(request: TransferRequest): Promise<boolean> {
    const receiver = this.port.peer(request.receiver.serverId);
    const view: TransferView = {
      transfer_id: request.transferId,
      status: "pending",
      filename: request.filename,
      file_size: request.fileSize,
      chunks_relayed: 0,
      total_chunks: totalChunksOf(request.fileSize),
      error: null,
    };
    const t: Outgoing = { request, view, receiver, hash: createHash("sha256"), bytes: 0, inFlightBytes: 0, lastActivity: Date.now() };
    this.outgoing.set(request.transferId, t);
    const offered = await receiver.offerTransfer({
      transferId: request.transferId,
      senderServerId: request.senderServerId,
      filename: request.filename,
      fileSize: request.fileSize,
      sha256: request.sha256,
      senderName: request.senderName,
      sessionId: request.receiver.sessionId,
    });
    if (!offered) {
      this.outgoing.delete(request.transferId);
      return false;
    }
    await this.save(t);
    await this.port.scheduleAlarm(Date.now() + TRANSFER_IDLE_MS);
    await this.port.record(request.projectId, "file_transfer_started", this.eventData(t));
    return true;
  }

  /** The status the CLI polls; null for a transfer this server never sent. */
  async status(transferId: string): Promise<TransferView | null> {
    const live = this.outgoing.get(transferId);
    if (live) return { ...live.view };
    const stored = await this.port.storage.get<{ view: TransferView }>(`${KEY}${transferId}`);
    if (!stored) return null;
    // Kept mid-way, then the link restarted: nothing relays it any more.
    if (!FINAL.includes(stored.view.status)) return { ...stored.view, status: "failed", error: "The hub restarted while relaying the transfer" };
    return stored.view;
  }

  /** A frame of the sending daemon's; false when it is not about a transfer this link sends. */
  fromSender(type: string, frame: Record<string, unknown>, text: string): boolean {
    const t = this.outgoing.get(idOf(frame));
    if (!t) return type !== "file_error" && this.ended.has(idOf(frame));
    t.lastActivity = Date.now();
    if (type === "file_chunk") this.chunk(t, frame, text);
    else if (type === "file_complete") this.complete(t, frame);
    else void this.fail(t, `The sending daemon reported: ${typeof frame.error === "string" ? frame.error : "an error"}`);
    return true;
  }

  private chunk(t: Outgoing, frame: Record<string, unknown>, text: string) {
    if (t.view.status !== "accepted" && t.view.status !== "transferring") return void this.fail(t, "A chunk came before the receiver accepted the file");
    if (frame.index !== t.view.chunks_relayed) {
      return void this.fail(t, `Chunk ${String(frame.index)} arrived when chunk ${t.view.chunks_relayed} was expected: chunks must come in order`);
    }
    let bytes: Uint8Array;
    try {
      bytes = Uint8Array.fromBase64(typeof frame.data === "string" ? frame.data : "");
    } catch {
      return void this.fail(t, `Chunk ${t.view.chunks_relayed} is not base64`);
    }
    t.bytes += bytes.byteLength;
    if (t.bytes > t.request.fileSize) return void this.fail(t, `The chunks hold more than the ${t.request.fileSize} bytes offered`);
    if (t.inFlightBytes + text.length > RELAY_WINDOW_BYTES) {
      return void this.fail(t, `The receiver's link fell more than ${RELAY_WINDOW_BYTES} bytes behind the sender`);
    }
    t.hash.update(bytes);
    const first = t.view.status === "accepted";
    t.view.status = "transferring";
    t.view.chunks_relayed++;
    if (Number.isSafeInteger(frame.total_chunks)) t.view.total_chunks = frame.total_chunks as number;
    this.relay(t, text);
    if (first) void this.save(t);
  }

  private complete(t: Outgoing, frame: Record<string, unknown>) {
    const { request, view } = t;
    if (view.status !== "accepted" && view.status !== "transferring") return void this.fail(t, "The file was completed before the receiver accepted it");
    if (frame.total_chunks !== view.chunks_relayed) {
      return void this.fail(t, `The sender completed after ${String(frame.total_chunks)} chunks, but ${view.chunks_relayed} were relayed`);
    }
    const relayed = t.hash.digest("hex");
    if (t.bytes !== request.fileSize || relayed !== request.sha256 || frame.sha256 !== request.sha256) {
      return void this.fail(
        t,
        `sha256 mismatch: ${t.bytes} bytes hashing to ${relayed} were relayed; ${request.fileSize} bytes with sha256 ${request.sha256} were offered`,
      );
    }
    // The receiver checks the file against the sha256 in this frame: the one offered, and seen on the way.
    this.relay(t, JSON.stringify({ type: "file_complete", transfer_id: request.transferId, total_chunks: view.chunks_relayed, sha256: request.sha256 }));
  }

  private relay(t: Outgoing, text: string) {
    t.inFlightBytes += text.length;
    this.peakInFlightBytes = Math.max(this.peakInFlightBytes, this.inFlightBytes());
    t.receiver.toReceiver(t.request.transferId, text).then(
      () => (t.inFlightBytes -= text.length),
      (e) => {
        t.inFlightBytes -= text.length;
        void this.fail(t, `The receiver's link could not be reached: ${e instanceof Error ? e.message : String(e)}`);
      },
    );
  }

  private inFlightBytes() {
    let sum = 0;
    for (const t of this.outgoing.values()) sum += t.inFlightBytes;
    return sum;
  }

  /** A frame of the receiving daemon's, passed on by its link. */
  async fromReceiver(transferId: string, frame: Record<string, unknown>) {
    const t = this.outgoing.get(transferId);
    if (!t) return;
    t.lastActivity = Date.now();
    const { request, view } = t;
    switch (frame.type) {
      case "file_accept":
        if (view.status !== "pending") return;
        view.status = "accepted";
        await this.save(t);
        this.port.toDaemon({ type: "file_accepted", transfer_id: transferId });
        this.port.toDaemon({ type: "file_send_start", transfer_id: transferId, file_path: request.filePath });
        return;
      case "file_ack":
        if (view.status !== "transferring" && !(view.status === "accepted" && request.fileSize === 0)) return;
        if (frame.sha256_verified !== true) return this.fail(t, `sha256 mismatch: the receiver's copy does not hash to ${request.sha256}`);
        view.status = "completed";
        this.port.toDaemon({ type: "file_ack", transfer_id: transferId, sha256_verified: true });
        return this.finish(t, "file_transfer_completed");
      case "gone":
        return this.fail(t, "The receiving daemon disconnected");
      default: {
        const error = typeof frame.error === "string" ? frame.error : "an error";
        // Refused before it accepted: the sender hears `file_rejected`, as hub.py expects.
        if (view.status === "pending") return this.fail(t, `The receiver rejected the file: ${error}`, "rejected");
        return this.fail(t, `The receiving daemon reported: ${error}`);
      }
    }
  }

  /** Ends a transfer that failed: both daemons are told why. */
  private async fail(t: Outgoing, reason: string, status: "failed" | "rejected" = "failed") {
    if (FINAL.includes(t.view.status)) return;
    t.view.status = status;
    t.view.error = reason;
    const id = t.request.transferId;
    this.port.toDaemon(status === "rejected" ? { type: "file_rejected", transfer_id: id, reason } : { type: "file_error", transfer_id: id, error: reason });
    t.receiver.toReceiver(id, JSON.stringify({ type: "file_error", transfer_id: id, error: reason }), true).catch(() => undefined);
    await this.finish(t, "file_transfer_failed");
  }

  private async finish(t: Outgoing, event: RemoteUseEvent) {
    this.outgoing.delete(t.request.transferId);
    if (this.ended.size >= MAX_ENDED_REMEMBERED) this.ended.clear();
    this.ended.add(t.request.transferId);
    await this.save(t, Date.now() + TRANSFER_RETENTION_MS);
    await this.port.scheduleAlarm(Date.now() + TRANSFER_RETENTION_MS);
    await this.port.record(t.request.projectId, event, this.eventData(t));
  }

  private eventData(t: Outgoing) {
    const { request, view } = t;
    return {
      transfer_id: request.transferId,
      filename: request.filename,
      file_size: request.fileSize,
      sha256: request.sha256,
      from_server: request.senderName,
      to_session_id: request.receiver.sessionId,
      to_session_name: request.receiver.sessionName,
      status: view.status,
      ...(view.status === "pending" ? {} : { chunks_relayed: view.chunks_relayed }),
      ...(view.error ? { error: view.error } : {}),
    };
  }

  private save(t: Outgoing, until?: number) {
    return this.port.storage.put(`${KEY}${t.request.transferId}`, { view: t.view, ...(until ? { until } : {}) });
  }

  // ── The receiving side ───────────────────────────────────────────────────

  /** Hands the receiving daemon the offer; false when it is not connected. */
  offer(offer: TransferOffer): boolean {
    const offered = this.port.toDaemon({
      type: "file_offer",
      transfer_id: offer.transferId,
      filename: offer.filename,
      file_size: offer.fileSize,
      sha256: offer.sha256,
      sender_session: offer.senderName,
      session_id: offer.sessionId,
    });
    if (offered) this.incoming.set(offer.transferId, offer.senderServerId);
    return offered;
  }

  /** A frame from the sender's link for the receiving daemon, sent as it came; the transfer is forgotten once it ends. */
  toReceiver(transferId: string, text: string, ends: boolean, daemon: WebSocket | undefined) {
    if (!this.incoming.has(transferId)) return;
    if (ends) this.incoming.delete(transferId);
    daemon?.send(text);
  }

  /** A frame of the receiving daemon's; false when it is not about a transfer this link receives. */
  fromReceivingDaemon(type: string, frame: Record<string, unknown>): boolean {
    const transferId = idOf(frame);
    const sender = this.incoming.get(transferId);
    if (sender === undefined) return false;
    if (type !== "file_accept") this.incoming.delete(transferId);
    void this.port
      .peer(sender)
      .fromReceiver(transferId, frame)
      .catch(() => undefined);
    return true;
  }

  // ── Either side ──────────────────────────────────────────────────────────

  /** The daemon left: what it was sending fails, and the senders of what it was receiving are told. */
  async daemonGone() {
    for (const t of [...this.outgoing.values()]) await this.fail(t, "The sending daemon disconnected");
    for (const [transferId, sender] of [...this.incoming]) {
      this.incoming.delete(transferId);
      await this.port
        .peer(sender)
        .fromReceiver(transferId, { type: "gone" })
        .catch(() => undefined);
    }
  }

  /** Transfers idle too long fail; finished ones past their retention are forgotten. Answers when to look again. */
  async sweep(now: number): Promise<number | null> {
    let next: number | null = null;
    const later = (at: number) => (next = next === null ? at : Math.min(next, at));
    for (const t of [...this.outgoing.values()]) {
      if (now - t.lastActivity >= TRANSFER_IDLE_MS) await this.fail(t, `No progress for ${TRANSFER_IDLE_MS / 1000} s`);
      else later(t.lastActivity + TRANSFER_IDLE_MS);
    }
    const stored = await this.port.storage.list<{ until?: number }>({ prefix: KEY });
    const expired = [...stored].filter(([, v]) => v.until !== undefined && v.until <= now).map(([key]) => key);
    for (const [, v] of stored) if (v.until !== undefined && v.until > now) later(v.until);
    if (expired.length > 0) await this.port.storage.delete(expired);
    return next;
  }
}
