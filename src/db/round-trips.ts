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
 *
 * The same store names the request's D1 session: statements and batches run
 * there (exec, which sessions lack, on the binding); outside a request, on
 * the binding.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { countedRaw, firstOf, heard, type RowCounts } from "./d1-meta";

export interface RoundTrips extends RowCounts {
  d1: number;
  /** Calls made on Durable Object stubs (billed one request each). */
  doRequests: number;
}

export const noRoundTrips = (): RoundTrips => ({ d1: 0, rowsRead: 0, rowsWritten: 0, uncounted: 0, doRequests: 0 });

/** Where a request's statements run: its D1 session (src/db/request-session.ts). */
export interface SessionSource {
  /** The database the session is of: a shard's statements (src/db/shards.ts) run in it only when they are its. */
  readonly binding: D1Database;
  readonly current: D1DatabaseSession;
}

const current = new AsyncLocalStorage<{ trips: RoundTrips; session?: SessionSource }>();

/** Runs `work` with its D1 round trips (through a binding from `countedD1`) counted in `trips`, and run in `session`. */
export const countingRoundTrips = <T>(trips: RoundTrips, work: () => T, session?: SessionSource): T => current.run({ trips, session }, work);

const tripsNow = () => current.getStore()?.trips;

const counted = () => {
  const trips = tripsNow();
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
        const trips = tripsNow();
        if (trips) trips.doRequests++;
        return Reflect.apply(value, target, args);
      };
    },
  });
}

/**
 * A statement prepared once (drizzle keeps some for the isolate's life) and run for many requests: it is prepared
 * again where it runs, in the session of the request running it. Each call also adds the rows D1 reports for it
 * (first and raw run as all: src/db/d1-meta.ts).
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
  async first(column?: string) {
    counted();
    const { results, meta } = await this.on(this.db.target()).all<Record<string, unknown>>();
    heard(tripsNow(), meta);
    return firstOf(results, column);
  }
  async all() {
    counted();
    const result = await this.on(this.db.target()).all();
    heard(tripsNow(), result.meta);
    return result;
  }
  async run() {
    counted();
    const result = await this.on(this.db.target()).run();
    heard(tripsNow(), result.meta);
    return result;
  }
  raw(options?: { columnNames?: boolean }) {
    counted();
    return countedRaw(this.on(this.db.target()) as Parameters<typeof countedRaw>[0], this.query, options, tripsNow());
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
    const session = this.pinned ? undefined : current.getStore()?.session;
    return (session?.binding === this.inner && session.current) || this.inner;
  }
  prepare(query: string) {
    return new CountedStatement(this, query);
  }
  async batch(statements: D1PreparedStatement[]) {
    counted();
    const target = this.target();
    const results = await target.batch(statements.map((s) => (s instanceof CountedStatement ? s.on(target) : s)));
    for (const r of results) heard(tripsNow(), r.meta);
    return results;
  }
  exec(query: string) {
    counted();
    // exec answers no meta.
    heard(tripsNow(), undefined);
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
