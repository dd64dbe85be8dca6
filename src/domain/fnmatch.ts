/**
 * Python's `fnmatch.fnmatchcase` on POSIX, which the daemon's PreToolUse hook applies to approval rules: `*` any run
 * of characters, `?` one character, `[seq]` / `[!seq]` one character in (or not in) the set, with ranges `a-z`; a `[`
 * without a closing `]` is a literal `[`, and there is no escaping. Classes follow CPython's `translate` exactly: a
 * reversed range (`z-a`) is dropped, a `-` first or last in the set is literal, an emptied set never matches and an
 * emptied negated set matches any character. Case-sensitive, on code points.
 */

type Token =
  | { kind: "star" }
  | { kind: "one"; test: (cp: number) => boolean }
  /** A class whose set came out empty: nothing matches it. */
  | { kind: "never" };

const BANG = 0x21;
const CLOSE = 0x5d;
const DASH = 0x2d;

const codePoints = (s: string) => Array.from(s, (ch) => ch.codePointAt(0)!);

/** The set of a class whose body (between `[` and `]`, `!` included) holds a `-`, split as CPython does into chunks joined by ranges. */
function chunksOf(body: number[]): number[][] {
  const chunks: number[][] = [];
  let i = 0;
  let k = body[0] === BANG ? 2 : 1;
  for (;;) {
    k = body.indexOf(DASH, k);
    if (k < 0) break;
    chunks.push(body.slice(i, k));
    i = k + 1;
    k += 3;
  }
  const last = body.slice(i);
  if (last.length > 0) chunks.push(last);
  else chunks[chunks.length - 1]!.push(DASH);
  // A reversed range is dropped with both its ends.
  for (let k = chunks.length - 1; k > 0; k--) {
    if (chunks[k - 1]!.at(-1)! > chunks[k]![0]!) {
      chunks[k - 1] = [...chunks[k - 1]!.slice(0, -1), ...chunks[k]!.slice(1)];
      chunks.splice(k, 1);
    }
  }
  return chunks;
}

/** The token for a class body, given as the chunks its ranges join (one chunk when it has no range). */
function classToken(chunks: number[][]): Token {
  const flat = chunks.flat();
  if (flat.length === 0) return { kind: "never" };
  if (flat.length === 1 && flat[0] === BANG) return { kind: "one", test: () => true };
  const negated = flat[0] === BANG;
  if (negated) chunks = [chunks[0]!.slice(1), ...chunks.slice(1)];
  const singles = new Set(chunks.flat());
  const ranges = chunks.slice(1).map((chunk, k) => [chunks[k]!.at(-1)!, chunk[0]!] as const);
  const inSet = (cp: number) => singles.has(cp) || ranges.some(([lo, hi]) => lo <= cp && cp <= hi);
  return { kind: "one", test: negated ? (cp) => !inSet(cp) : inSet };
}

/** The pattern as tokens; runs of `*` are one. */
function tokensOf(pattern: string): Token[] {
  const p = codePoints(pattern);
  const tokens: Token[] = [];
  let i = 0;
  while (i < p.length) {
    const cp = p[i++]!;
    if (cp === 0x2a) {
      if (tokens.at(-1)?.kind !== "star") tokens.push({ kind: "star" });
    } else if (cp === 0x3f) {
      tokens.push({ kind: "one", test: () => true });
    } else if (cp === 0x5b) {
      let j = i;
      if (p[j] === BANG) j++;
      if (p[j] === CLOSE) j++;
      while (j < p.length && p[j] !== CLOSE) j++;
      if (j >= p.length) {
        tokens.push({ kind: "one", test: (c) => c === cp });
        continue;
      }
      const body = p.slice(i, j);
      tokens.push(classToken(body.includes(DASH) ? chunksOf(body) : [body]));
      i = j + 1;
    } else {
      tokens.push({ kind: "one", test: (c) => c === cp });
    }
  }
  return tokens;
}

/** Whether `name` matches `pattern` as Python's `fnmatch.fnmatchcase` decides (and `fnmatch.fnmatch` on POSIX). */
export function fnmatch(name: string, pattern: string): boolean {
  return matchTokens(codePoints(name), tokensOf(pattern));
}

/** Glob matching with one-character tokens: the last star takes one more character on each mismatch, so O(name × pattern). */
function matchTokens(s: number[], tokens: Token[]): boolean {
  let si = 0;
  let ti = 0;
  let starTi = -1;
  let starSi = 0;
  while (si < s.length) {
    const t = tokens[ti];
    if (t?.kind === "star") {
      starTi = ti++;
      starSi = si;
    } else if (t?.kind === "one" && t.test(s[si]!)) {
      ti++;
      si++;
    } else if (starTi >= 0) {
      ti = starTi + 1;
      si = ++starSi;
    } else {
      return false;
    }
  }
  while (tokens[ti]?.kind === "star") ti++;
  return ti === tokens.length;
}

/** Whether some string made only of `alphabet`'s characters matches the pattern (each token accepts one of them). */
export function matchesSomeOf(pattern: string, alphabet: string): boolean {
  const chars = codePoints(alphabet);
  return tokensOf(pattern).every((t) => t.kind === "star" || (t.kind === "one" && chars.some(t.test)));
}
