/** A queue for work of one kind: the calls given to it run one at a time, in the order they came, whatever each ends in. */
export function oneAtATime() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work);
    tail = run.catch(() => undefined);
    return run;
  };
}
