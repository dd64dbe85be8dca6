/** The value at or below which `p` percent of `xs` fall (the nearest rank): the figures the bench prints, in Node and in workerd alike. */
export const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
