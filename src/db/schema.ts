/**
 * D1 schema. Timestamps are ISO-8601 UTC strings (they sort correctly as text
 * and are what the API returns); ids are UUIDs; JSON columns hold protocol
 * objects exactly as accepted. One file per area under schema/; drizzle-kit
 * reads them all through this one.
 */
export * from "./schema/people";
export * from "./schema/servers";
export * from "./schema/requests";
export * from "./schema/tasks";
export * from "./schema/events";
export * from "./schema/files";
export * from "./schema/deliveries";
export * from "./schema/governance";
export * from "./schema/access";
export * from "./schema/code-health";
export * from "./schema/tokens";
export * from "./schema/invites";
export * from "./schema/usage";
export * from "./schema/overview";
export * from "./schema/automation";
export * from "./schema/reviews";
export * from "./schema/slack";
export * from "./schema/archives";
