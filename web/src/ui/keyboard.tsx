/**
 * The keyboard, bound once for the app: the shortcuts (shortcuts.ts), the list of them (`?`) and the command palette.
 * Both load the first time they are opened (by Ctrl/Cmd-K, `/` on a page without a search, or the sidebar's button).
 */
import type { ComponentType } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Route } from "../router";
import { bindShortcuts } from "../shortcuts";
import { toast } from "./toasts";
import "./keyboard.css";

type PaletteView = ComponentType<{ route: Route; onClose: () => void }>;
type ListView = ComponentType<{ inProject: boolean; modifier: string; onClose: () => void }>;

const paletteRequests = new Set<() => void>();
/** Opens the command palette (the sidebar's "Search" button). */
export const openPalette = () => paletteRequests.forEach((open) => open());

/** "Ctrl" or "⌘", as this platform names the palette's modifier. */
export const paletteModifier = () => (/Mac|iPhone|iPad/.test(navigator.platform) ? "⌘" : "Ctrl");

const unloaded = () => toast("This could not be loaded (the hub may have been updated): reload the page.", "error");

export function Keyboard(props: { route: Route }) {
  const [shown, setShown] = useState<"palette" | "list" | null>(null);
  const [palette, setPalette] = useState<PaletteView | null>(null);
  const [list, setList] = useState<ListView | null>(null);
  // The handlers, bound once, read the page's route as it is now.
  const route = useRef(props.route);
  route.current = props.route;

  useEffect(() => {
    const openPalette = () => {
      setShown("palette");
      void import("./palette").then((m) => setPalette(() => m.Palette), unloaded);
    };
    const openList = () => {
      setShown("list");
      void import("./shortcut-list").then((m) => setList(() => m.ShortcutList), unloaded);
    };
    paletteRequests.add(openPalette);
    const unbind = bindShortcuts({
      route: () => route.current,
      palette: openPalette,
      help: openList,
      noProject: () => toast("Open a project to make a task in it."),
    });
    return () => {
      paletteRequests.delete(openPalette);
      unbind();
    };
  }, []);

  const close = () => setShown(null);
  const Palette = shown === "palette" ? palette : null;
  const List = shown === "list" ? list : null;
  return (
    <>
      {Palette && <Palette route={props.route} onClose={close} />}
      {List && <List inProject={"projectId" in props.route} modifier={paletteModifier()} onClose={close} />}
    </>
  );
}
