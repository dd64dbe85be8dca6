/**
 * The dashboard's navigation: the places (projects, inbox, agents, rules, usage, access, people, account) and the
 * person's projects. A fixed column on wide screens; below 800 px a menu opened from the top bar.
 */
import { Bot, ChartColumn, FolderKanban, Inbox, KeyRound, LogOut, Menu, MessagesSquare, Search, Settings, ShieldCheck, Users, X } from "lucide";
import { useEffect, useState } from "preact/hooks";
import { signOut } from "../api";
import { useMe } from "../me";
import { useProjects } from "../project-names";
import { linkProps, type Route } from "../router";
import { UnreadBadge } from "../views/unread-badge";
import { Icon } from "./icon";
import { openPalette, paletteModifier } from "./keyboard";
import { ThemeToggle } from "./theme-toggle";

/** Which sidebar place a page belongs to. */
function placeOf(route: Route): string {
  if (route.page === "server") return "agents";
  if ("projectId" in route) return "project";
  return route.page;
}

export function Sidebar(props: { route: Route }) {
  const me = useMe();
  const projects = useProjects();
  const [open, setOpen] = useState(false);
  const place = placeOf(props.route);
  const currentProject = "projectId" in props.route ? props.route.projectId : null;
  // Moving to another page closes the phone menu.
  useEffect(() => setOpen(false), [props.route]);
  // Escape closes the phone menu, as it closes dialogs and the palette.
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && !document.querySelector("dialog[open]") && setOpen(false);
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [open]);

  const item = (path: string, page: string, label: string, icon: typeof Inbox, extra?: preact.ComponentChildren) => (
    <a class="nav-item" {...linkProps(path)} aria-current={place === page ? "page" : undefined}>
      <Icon icon={icon} />
      <span class="nav-label">{label}</span>
      {extra}
    </a>
  );

  return (
    <>
      <header class="topbar">
        <button type="button" class="icon-button" aria-label="Menu" aria-expanded={open} aria-controls="sidebar" onClick={() => setOpen(!open)}>
          <Icon icon={open ? X : Menu} size={20} />
        </button>
        <a class="brand" {...linkProps("/")}>
          Orchestratia
        </a>
        <a class="icon-button" {...linkProps("/inbox")} aria-label="Inbox">
          <Icon icon={Inbox} size={20} />
          <UnreadBadge />
        </a>
      </header>
      {open && <div class="sidebar-backdrop" onClick={() => setOpen(false)} />}
      <aside id="sidebar" class={`sidebar ${open ? "open" : ""}`}>
        <a class="brand" {...linkProps("/")}>
          Orchestratia
        </a>
        <button type="button" class="palette-button" onClick={openPalette}>
          <Icon icon={Search} />
          <span class="nav-label">Search…</span>
          <kbd aria-hidden="true">{paletteModifier()} K</kbd>
        </button>
        <nav aria-label="Main">
          {item("/", "projects", "Projects", FolderKanban)}
          {item("/inbox", "inbox", "Inbox", Inbox, <UnreadBadge />)}
          {item("/agents", "agents", "Agents and servers", Bot)}
          {item("/rules", "rules", "Rules", ShieldCheck)}
          {item("/usage", "usage-all", "Usage", ChartColumn)}
          {me.role === "admin" && item("/access", "access", "Access", KeyRound)}
          {me.role === "admin" && item("/people", "people", "People", Users)}
          {me.role === "admin" && item("/settings/slack", "slack", "Slack", MessagesSquare)}
          {item("/account", "account", "Settings", Settings)}
        </nav>
        {projects && projects.length > 0 && (
          <nav aria-label="Your projects" class="sidebar-projects">
            <h2>Projects</h2>
            {projects.map((p) => (
              <a key={p.id} class="nav-item project-link" {...linkProps(`/projects/${p.id}/board`)} aria-current={currentProject === p.id ? "page" : undefined}>
                <span class="project-dot" aria-hidden="true">
                  {p.name.slice(0, 1).toUpperCase()}
                </span>
                <span class="nav-label">{p.name}</span>
              </a>
            ))}
          </nav>
        )}
        <footer class="sidebar-foot">
          <ThemeToggle />
          <a class="who" {...linkProps("/account")} title="Your account">
            {me.email} · {me.role}
          </a>
          <button type="button" class="ghost sign-out" onClick={() => void signOut()}>
            <Icon icon={LogOut} />
            Sign out
          </button>
        </footer>
      </aside>
    </>
  );
}
