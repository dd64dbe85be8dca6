/** The app: restores the session from the refresh cookie, then shows the page the path names. */
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { api, onSignedOut, refresh, signOut } from "./api";
import { linkProps, useRoute } from "./router";
import type { Me } from "./types";
import { Board } from "./views/board";
import { Projects } from "./views/projects";
import { SignIn } from "./views/sign-in";
import { TaskPage } from "./views/task";

const MeContext = createContext<Me | null>(null);
export const useMe = () => useContext(MeContext)!;
/** Whether the signed-in person may change things (viewers only watch). */
export const useCanWrite = () => useMe().role !== "viewer";

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const route = useRoute();

  useEffect(() => {
    // A reload keeps the person signed in: the refresh cookie gives a new access token.
    void (async () => setMe((await refresh()) ? await api<Me>("/api/v1/auth/me").catch(() => null) : null))();
    return onSignedOut(() => setMe(null));
  }, []);

  if (me === undefined) return <p class="loading">Loading…</p>;
  if (me === null) return <SignIn onSignedIn={setMe} />;
  return (
    <MeContext.Provider value={me}>
      <header class="top">
        <a class="brand" {...linkProps("/")}>
          Orchestratia
        </a>
        <nav aria-label="Main">
          <a {...linkProps("/")} aria-current={route.page === "projects" ? "page" : undefined}>
            Projects
          </a>
        </nav>
        <span class="who">
          {me.email} · {me.role}
        </span>
        <button class="link" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main class="page">
        {route.page === "projects" && <Projects />}
        {route.page === "board" && <Board projectId={route.projectId} />}
        {route.page === "task" && <TaskPage projectId={route.projectId} taskId={route.taskId} />}
        {(route.page === "not-found" || route.page === "graph" || route.page === "activity" || route.page === "inbox" || route.page === "agents") && (
          <p>Nothing here yet.</p>
        )}
      </main>
    </MeContext.Provider>
  );
}
