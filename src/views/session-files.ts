/** A session's files as the daemon's fs_handler.py describes them (API.md "Session files and code health"). */
import { z } from "zod";

const mtime = z.int().meta({ description: "Last modification, in whole seconds since the Unix epoch (the daemon's clock)" });
const sha256 = z.string().meta({ description: "The SHA-256 of the file's bytes, hexadecimal" });
const kind = z.enum(["dir", "file", "symlink"]).meta({ description: "`symlink`: a link, not followed in the listing" });

export const fsListingSchema = z
  .object({
    path: z.string().meta({ description: "The folder listed, relative to the root" }),
    entries: z.array(z.object({ name: z.string(), type: kind, size: z.int(), mtime })).meta({ description: "Folders first, then by name" }),
    truncated: z.boolean().meta({ description: "The folder holds more than the 5000 entries the daemon lists" }),
  })
  .meta({ id: "SessionFolder" });

export const fsFileSchema = z
  .object({
    path: z.string(),
    content: z.string().nullable().meta({ description: "The text; null for a binary file (a NUL byte in its first 8 KiB)" }),
    binary: z.boolean(),
    encoding: z.enum(["utf-8", "latin-1", "binary"]).meta({ description: "`latin-1` when the bytes are not UTF-8 (saving writes UTF-8)" }),
    size: z.int(),
    mtime,
    sha256,
  })
  .meta({ id: "SessionFile" });

export const fsWrittenSchema = z.object({ path: z.string(), sha256, mtime, size: z.int() }).meta({ id: "SessionFileWritten" });

export const fsStatSchema = z
  .object({
    path: z.string(),
    exists: z.boolean(),
    type: kind.optional(),
    size: z.int().optional(),
    mtime: mtime.optional(),
    sha256: sha256.optional().meta({ description: "For files of at most 5 MB" }),
  })
  .meta({ id: "SessionFileStat" });

const int = (v: unknown) => (Number.isSafeInteger(v) ? (v as number) : 0);
const str = (v: unknown) => (typeof v === "string" ? v : "");
const kindOf = (v: unknown): z.infer<typeof kind> => (v === "dir" || v === "symlink" ? v : "file");

/** The daemon's answers, kept to the fields it sends (fs_handler.py). */
export const fsListingView = (path: string, a: Record<string, unknown>): z.infer<typeof fsListingSchema> => ({
  path,
  entries: (Array.isArray(a.entries) ? a.entries : []).map((e: Record<string, unknown>) => ({
    name: str(e.name),
    type: kindOf(e.type),
    size: int(e.size),
    mtime: int(e.mtime),
  })),
  truncated: a.truncated === true,
});

export const fsFileView = (path: string, a: Record<string, unknown>): z.infer<typeof fsFileSchema> => ({
  path,
  content: a.binary === true || typeof a.content !== "string" ? null : a.content,
  binary: a.binary === true,
  encoding: a.binary === true ? "binary" : a.encoding === "latin-1" ? "latin-1" : "utf-8",
  size: int(a.size),
  mtime: int(a.mtime),
  sha256: str(a.sha256),
});

export const fsWrittenView = (path: string, a: Record<string, unknown>): z.infer<typeof fsWrittenSchema> => ({
  path,
  sha256: str(a.sha256),
  mtime: int(a.mtime),
  size: int(a.size),
});

export const fsStatView = (path: string, a: Record<string, unknown>): z.infer<typeof fsStatSchema> =>
  a.exists !== true
    ? { path, exists: false }
    : {
        path,
        exists: true,
        type: kindOf(a.type),
        size: int(a.size),
        mtime: int(a.mtime),
        ...(typeof a.sha256 === "string" ? { sha256: a.sha256 } : {}),
      };
