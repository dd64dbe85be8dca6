/** The signed-in person, provided by the app to every view (views import it from here, not from the app, which imports them). */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Me } from "./types";

export const MeContext = createContext<Me | null>(null);
export const useMe = () => useContext(MeContext)!;
/** Whether the signed-in person may change things (viewers only watch). */
export const useCanWrite = () => useMe().role !== "viewer";
