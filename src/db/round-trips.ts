/**
 * Counts the D1 round trips a Worker request makes: every statement run
 * (first, all, run, raw), every batch and every exec is one. The Worker's
 * requests share one drizzle instance per isolate (building one is costly),
 * so the binding is wrapped once and each call counts against the request
 * it runs for, found through AsyncLocalStorage. Beside them, what the
 * bill is made of: the rows D1 says each call read and wrote, and the
 * requests made to Durable Objects (each RPC call or fetch on a stub is one).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { withRowCounts } from "./d1-meta";

export interface RoundTrips {
  d1: number;
  rowsRead: number;
  rowsWritten: number;
  /** Calls made on Durable Object stubs (billed one request each). */
  doRequests: number;
}

export const noRoundTrips = (): RoundTrips => ({ d1: 0, rowsRead: 0, rowsWritten: 0, doRequests: 0 });

const current = new AsyncLocalStorage<RoundTrips>();

/** Runs `work` with its D1 round trips (through a binding from `countedD1`) counted in `trips`. */
export const countingRoundTrips = <T>(trips: RoundTrips, work: () => T): T => current.run(trips, work);

const counted = () => {
  const trips = current.getStore();
  if (trips) trips.d1++;
};

const rowsHeard = (read: number, written: number) => {
  const trips = current.getStore();
  if (!trips) return;
  trips.rowsRead += read;
  trips.rowsWritten += written;
};

const rowCounted = new WeakMap<D1Database, D1Database>();
/** The binding, with the rows each call reads and writes counted against the work running (once per binding per isolate). */
export function rowCountedD1(d1: D1Database): D1Database {
  let db = rowCounted.get(d1);
  if (!db) rowCounted.set(d1, (db = withRowCounts(d1, rowsHeard).d1));
  return db;
}

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

class CountedStatement {
  constructor(readonly inner: D1PreparedStatement) {}
  bind(...values: unknown[]) {
    return new CountedStatement(this.inner.bind(...values));
  }
  first(column?: string) {
    counted();
    return column === undefined ? this.inner.first() : this.inner.first(column);
  }
  all() {
    counted();
    return this.inner.all();
  }
  run() {
    counted();
    return this.inner.run();
  }
  raw(options?: { columnNames?: boolean }) {
    counted();
    // The overloads differ only in whether the first row is the column names.
    return this.inner.raw(options as { columnNames: true });
  }
}

const innerOf = (statement: D1PreparedStatement) => (statement instanceof CountedStatement ? statement.inner : statement) as D1PreparedStatement;

/** A binding, or a session of one (the Sessions API): both prepare statements and run batches. */
class CountedD1 {
  constructor(private readonly inner: D1Database | D1DatabaseSession) {}
  prepare(query: string) {
    return new CountedStatement(this.inner.prepare(query));
  }
  batch(statements: D1PreparedStatement[]) {
    counted();
    return this.inner.batch(statements.map(innerOf));
  }
  exec(query: string) {
    counted();
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
  if (!db) wrapped.set(d1, (db = new CountedD1(rowCountedD1(d1)) as unknown as D1Database));
  return db;
}
