/** Whether an account may act at all: an admin's deactivation stops every way in at once, until they reactivate it. */
import type { UserRow } from "../db/client";
import { unauthorized } from "../http/problem";

/** 401 `ACCOUNT_DEACTIVATED` for an account an admin deactivated; every door that turns a credential into a person asks it. */
export function assertActive(user: Pick<UserRow, "deactivatedAt">) {
  if (user.deactivatedAt) throw unauthorized("This account has been deactivated: an admin of the hub can reactivate it", "ACCOUNT_DEACTIVATED");
}
