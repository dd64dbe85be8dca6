/**
 * Counts the D1 round trips a Worker request makes: every statement run
 * (first, all, run, raw), every batch and every exec is one. The Worker's
 * requests share one drizzle instance per isolate (building one is costly),
 * so the binding is wrapped once and each call counts against the request
 * it runs for, found through AsyncLocalStorage. Beside them, what the
 * bill is made of: the rows D1 says each call read and wrote, and the
 * requests made to Durable Objects (each RPC call or fetch on a stub is one).
 * Only the rows of a query's first raw() in the isolate, of a raw() whose
 * rows cannot be rebuilt from all() and of exec go uncounted, and are
 * counted as such (src/db/d1-meta.ts).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { countedRaw, firstOf, heard, type RowCounts } from "./d1-meta";

export interface RoundTrips extends RowCounts {
  d1: number;
  /** Calls made on Durable Object stubs (billed one request each). */
  doRequests: number;
}

export const noRoundTrips = (): RoundTrips => ({ d1: 0, rowsRead: 0, rowsWritten: 0, uncounted: 0, doRequests: 0 });

const current = new AsyncLocalStorage<RoundTrips>();

/** Runs `work` with its D1 round trips (through a binding from `countedD1`) counted in `trips`. */
export const countingRoundTrips = <T>(trips: RoundTrips, work: () => T): T => current.run(trips, work);

const counted = () => {
  const trips = current.getStore();
  if (trips) trips.d1++;
};

/**
 * The stub, with each call on it (an RPC method, or fetch) counted as one Durable Object request against the work
 * running. Properties that are not methods (`id`, `name`) pass as they are.
 */
export function countedStub<T extends object>(stub: T): T {
  return new Proxy(stub, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function" || key === "then") return value;
      return (...args: unknown[]) => {
        const trips = current.getStore();
        if (trips) trips.doRequests++;
        return Reflect.apply(value, target, args);
      };
    },
  });
}

/** Each call also adds the rows D1 reports for it (first and raw run as all: src/db/d1-meta.ts). */
class CountedStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    private readonly query: string,
  ) {}
  bind(...values: unknown[]) {
    return new CountedStatement(this.inner.bind(...values), this.query);
  }
  async first(column?: string) {
    counted();
    const { results, meta } = await this.inner.all<Record<string, unknown>>();
    heard(current.getStore(), meta);
    return firstOf(results, column);
  }
  async all() {
    counted();
    const result = await this.inner.all();
    heard(current.getStore(), result.meta);
    return result;
  }
  async run() {
    counted();
    const result = await this.inner.run();
    heard(current.getStore(), result.meta);
    return result;
  }
  raw(options?: { columnNames?: boolean }) {
    counted();
    return countedRaw(this.inner as Parameters<typeof countedRaw>[0], this.query, options, current.getStore());
  }
}

const innerOf = (statement: D1PreparedStatement) => (statement instanceof CountedStatement ? statement.inner : statement) as D1PreparedStatement;

/** A binding, or a session of one (the Sessions API): both prepare statements and run batches. */
class CountedD1 {
  constructor(private readonly inner: D1Database | D1DatabaseSession) {}
  prepare(query: string) {
    return new CountedStatement(this.inner.prepare(query), query);
  }
  async batch(statements: D1PreparedStatement[]) {
    counted();
    const results = await this.inner.batch(statements.map(innerOf));
    for (const r of results) heard(current.getStore(), r.meta);
    return results;
  }
  exec(query: string) {
    counted();
    // exec answers no meta.
    heard(current.getStore(), undefined);
    return (this.inner as D1Database).exec(query);
  }
  withSession(constraintOrBookmark?: string) {
    return new CountedD1((this.inner as D1Database).withSession(constraintOrBookmark));
  }
  getBookmark() {
    return (this.inner as D1DatabaseSession).getBookmark();
  }
}

const wrapped = new WeakMap<D1Database, D1Database>();

/** The binding, counting its round trips against the request running (once per binding per isolate). */
export function countedD1(d1: D1Database): D1Database {
  let db = wrapped.get(d1);
  if (!db) wrapped.set(d1, (db = new CountedD1(d1) as unknown as D1Database));
  return db;
}
