/** Types of deploy-plan.mjs, for the test that imports it (the project checks TypeScript only). */
export declare const PLACEHOLDER_DATABASE_ID: string;
export declare const SHARD_BINDING: RegExp;
export declare function shardBindings(toml: string): string[];
export declare function databaseSettings(toml: string, binding?: string): { name: string; id: string | null; placeholder: boolean };
export declare function withDatabaseId(toml: string, id: string, binding?: string): string;
export declare function bucketName(toml: string, binding?: string): string;
export declare function databaseIdFromList(output: string, name: string): string | null;
export declare function bucketNamesFromList(output: string): string[];
export declare function secretNamesFromList(result: { status: number; stdout: string; stderr: string }): string[];
export declare function randomSecret(bytes?: number): string;
export declare function secretsToUpload(existing: string[], generate?: (bytes: number) => string): Record<string, string>;
export declare function hubUrlFromOutputFile(ndjson: string): string | null;
export declare function bootstrapOutcome(
  status: number,
  body: { code?: string; detail?: string } | null,
): { kind: "created" } | { kind: "exists" } | { kind: "failed"; reason: string };
