/** The names of the projects the person sees, by id, read once per page (an empty map until read, or if it fails). */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "./api";

export function useProjectNames(): Map<string, string> {
  const [names, setNames] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    void ok(hub.GET("/api/v1/projects")).then(
      (r) => setNames(new Map(r.projects.map((p) => [p.id, p.name]))),
      () => undefined,
    );
  }, []);
  return names;
}
