/** zod building blocks shared by the hub's own request bodies. */
import { z } from "zod";
import { ROLES } from "../db/schema";

export const email = z.email("must be an email address").max(254).transform((e) => e.toLowerCase());
export const password = z.string().min(8, "must be at least 8 characters").max(256, "must be at most 256 characters");
export const role = z.enum(ROLES);
export const uuid = z.uuid("must be a UUID");
/** A short human label: trimmed, non-empty. */
export const label = (max = 200) => z.string().trim().min(1, "must not be empty").max(max, `must be at most ${max} characters`);
export const text = (max = 10_000) => z.string().max(max, `must be at most ${max} characters`);
