/**
 * Compile-time only (never run): a call the description does not allow must stay a type error, so that a drift
 * between the hub and its description breaks `npm run typecheck`. Each `@ts-expect-error` fails the typecheck
 * once the client accepts what follows it.
 */
import { hubClient } from "./index";

export async function refusedByTheTypes() {
  const hub = hubClient();
  // @ts-expect-error a path the description lacks
  await hub.GET("/api/v1/projectz");
  // @ts-expect-error a body field the description lacks
  await hub.POST("/api/v1/projects", { body: { name: "p", colour: "red" } });
  // @ts-expect-error a query parameter the description lacks
  await hub.GET("/api/v1/projects/{id}/events", { params: { path: { id: "p" }, query: { sinse: "0" } } });
  // @ts-expect-error a path parameter the description lacks
  await hub.POST("/api/v1/server/tasks/{id}/start", { params: { path: { id: "t", project: "p" } } });
  // @ts-expect-error a required path parameter left out
  await hub.POST("/api/v1/server/tasks/{id}/start", {});
  const { data } = await hub.GET("/api/v1/projects/{id}", { params: { path: { id: "p" } } });
  // @ts-expect-error a response field the description lacks
  void data?.colour;
  const text = await hub.GET("/api/v1/openapi.json", { parseAs: "text" });
  text.data satisfies string | undefined;
}
