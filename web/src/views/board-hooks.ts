/** What the board reads beside its tasks: whether the screen is a phone's, the clock for cards' ages, and the agents online. */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { serves } from "./start-session";

/** Whether a media query matches, following it as the window changes. */
export function useMedia(query: string): boolean {
  const [matches, setMatches] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const list = matchMedia(query);
    const changed = () => setMatches(list.matches);
    list.addEventListener("change", changed);
    changed();
    return () => list.removeEventListener("change", changed);
  }, [query]);
  return matches;
}

/** The time now, moved on each minute (cards' ages are in minutes at best). */
export function useMinuteClock(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** How many servers serving the project are online (null until read, or when the list cannot be read): one request. */
export function useAgentsOnline(projectId: string): number | null {
  const [online, setOnline] = useState<number | null>(null);
  useEffect(() => {
    let live = true;
    void ok(hub.GET("/api/v1/servers")).then(
      (r) => live && setOnline(r.servers.filter((s) => serves(s, projectId) && s.status === "online").length),
      () => live && setOnline(null),
    );
    return () => {
      live = false;
    };
  }, [projectId]);
  return online;
}
