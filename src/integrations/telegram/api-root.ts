/** Where the Bot API is: Telegram's own, or TELEGRAM_API_ROOT (a local fake in tests). */
import type { Env } from "../../runtime/env";

export const apiRootOf = (env: Env) => env.TELEGRAM_API_ROOT || "https://api.telegram.org";
