/**
 * Counts the D1 round trips a Worker request makes: every statement run
 * (first, all, run, raw), every batch and every exec is one. The Worker's
 * requests share one drizzle instance per isolate (building one is costly),
 * so the binding is wrapped once and each call counts against the request
 * it runs for, found through AsyncLocalStorage. The same store names the
 * request's D1 session: statements and batches run there (exec, which
 * sessions lack, on the binding); outside a request, on the binding.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface RoundTrips {
  d1: number;
}

/** Where a request's statements run: its D1 session (src/db/request-session.ts). */
export interface SessionSource {
  readonly current: D1DatabaseSession;
}

const current = new AsyncLocalStorage<{ trips: RoundTrips; session?: SessionSource }>();

/** Runs `work` with its D1 round trips (through a binding from `countedD1`) counted in `trips`, and run in `session`. */
export const countingRoundTrips = <T>(trips: RoundTrips, work: () => T, session?: SessionSource): T => current.run({ trips, session }, work);

const counted = () => {
  const trips = current.getStore()?.trips;
  if (trips) trips.d1++;
};

/**
 * A statement prepared once (drizzle keeps some for the isolate's life) and run for many requests: it is prepared
 * again where it runs, in the session of the request running it.
 */
class CountedStatement {
  constructor(
    private readonly db: CountedD1,
    readonly query: string,
    readonly values: unknown[] = [],
  ) {}
  bind(...values: unknown[]) {
    return new CountedStatement(this.db, this.query, values);
  }
  /** This statement prepared on `target`. */
  on(target: D1Database | D1DatabaseSession): D1PreparedStatement {
    const statement = target.prepare(this.query);
    return this.values.length > 0 ? statement.bind(...this.values) : statement;
  }
  first(column?: string) {
    counted();
    const statement = this.on(this.db.target());
    return column === undefined ? statement.first() : statement.first(column);
  }
  all() {
    counted();
    return this.on(this.db.target()).all();
  }
  run() {
    counted();
    return this.on(this.db.target()).run();
  }
  raw(options?: { columnNames?: boolean }) {
    counted();
    // The overloads differ only in whether the first row is the column names.
    return this.on(this.db.target()).raw(options as { columnNames: true });
  }
}

/** A binding, or a session of one (the Sessions API): both prepare statements and run batches. */
class CountedD1 {
  constructor(
    private readonly inner: D1Database | D1DatabaseSession,
    /** A session asked for explicitly keeps its statements; the binding's go to the running request's session. */
    private readonly pinned = false,
  ) {}
  /** Where statements run now. */
  target(): D1Database | D1DatabaseSession {
    return (!this.pinned && current.getStore()?.session?.current) || this.inner;
  }
  prepare(query: string) {
    return new CountedStatement(this, query);
  }
  batch(statements: D1PreparedStatement[]) {
    counted();
    const target = this.target();
    return target.batch(statements.map((s) => (s instanceof CountedStatement ? s.on(target) : s)));
  }
  exec(query: string) {
    counted();
    return (this.inner as D1Database).exec(query);
  }
  withSession(constraintOrBookmark?: string) {
    return new CountedD1((this.inner as D1Database).withSession(constraintOrBookmark), true);
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
