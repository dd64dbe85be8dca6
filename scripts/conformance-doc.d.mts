/** Types of conformance-doc.mjs, for the test that imports it (the project checks TypeScript only). */
export declare function mcpPackageLine(version: string): string;
export declare function kitTestOf(title: string): { file: string; test: string; says: string } | null;
export declare function a2aRows(report: unknown): string[][];
export declare function conformanceDoc(results: { mcp: unknown; a2a: unknown }): string;
