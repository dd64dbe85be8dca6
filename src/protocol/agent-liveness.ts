/**
 * The hub's half of the compute protocol's bidirectional heartbeat on an agent
 * socket (pure): it pings every agent on a schedule, and a socket it has heard
 * nothing from past a bound is closed, so that a vanished agent does not hold
 * its tasks' leases open forever through a socket nobody answers on.
 */

/** AGENT_PING_SECONDS: how often the room pings a quiet agent socket. */
export const DEFAULT_PING_SECONDS = 30;
/** AGENT_SILENCE_SECONDS: how long an agent socket may stay silent before it is closed (three missed pings). */
export const DEFAULT_SILENCE_SECONDS = 90;

/** A whole number of seconds from a variable, else the default. */
const seconds = (configured: string | undefined, fallback: number) => {
  const n = Number(configured);
  return configured && Number.isInteger(n) && n > 0 ? n : fallback;
};

export interface LivenessBounds {
  pingMs: number;
  silenceMs: number;
}

/** The bounds in force; the silence bound is never shorter than one ping interval, or every quiet socket would close. */
export function livenessBounds(env: { AGENT_PING_SECONDS?: string; AGENT_SILENCE_SECONDS?: string }): LivenessBounds {
  const pingMs = seconds(env.AGENT_PING_SECONDS, DEFAULT_PING_SECONDS) * 1000;
  return { pingMs, silenceMs: Math.max(seconds(env.AGENT_SILENCE_SECONDS, DEFAULT_SILENCE_SECONDS) * 1000, pingMs) };
}

/** What becomes of a socket last heard from at `lastHeard` as the room's schedule comes round: closed past the silence bound, else pinged. */
export const livenessAction = (lastHeard: number, now: number, bounds: LivenessBounds): "close" | "ping" =>
  now - lastHeard >= bounds.silenceMs ? "close" : "ping";
