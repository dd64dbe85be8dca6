/** Days the permission log keeps an entry in D1 (PERMISSION_LOG_DAYS, default 30). */
export const permissionLogDays = (value: string | undefined) => {
  const days = Number(value);
  return Number.isFinite(days) && days > 0 ? days : 30;
};
