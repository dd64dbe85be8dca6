import type { WorkerEnv as HubBindings } from "../src/worker-env";

declare global {
  namespace Cloudflare {
    interface Env extends HubBindings {
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
      /** "lenient" passes routes not yet in the API description (TRANSITIONAL). */
      API_CONFORMANCE?: string;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
      durableNamespaces: "ProjectRoom" | "ServerLink" | "WebhookEndpoint" | "TelegramChat";
    }
  }
}
