/** The earliest of the times given (epoch ms), or null when none is set: when the room's alarm is next due. */
export const earliest = (times: (number | null)[]) => {
  const set = times.filter((t): t is number => t !== null);
  return set.length ? Math.min(...set) : null;
};
