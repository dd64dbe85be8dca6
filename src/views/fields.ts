/** zod building blocks of the hub's responses, as the API's description states them. */
import { z } from "zod";

export const id = z.string().meta({ format: "uuid" });
export const timestamp = z.string().meta({ format: "date-time", description: "ISO-8601, UTC" });
/** Any JSON value the caller or an agent supplied, returned as it was kept. */
export const json = z.unknown();
export const jsonObject = z.record(z.string(), z.unknown());
