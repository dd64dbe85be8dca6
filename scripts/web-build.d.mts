import type { BuildOptions, Metafile } from "esbuild";
export function webBuildOptions(dir: string, nodePaths?: string[]): BuildOptions;
export function webSizes(metafile: Metafile, dir: string): { firstLoadBytes: number; firstLoadFiles: number; lazyBytes: number; lazyFiles: number };
export function kib(bytes: number): string;
