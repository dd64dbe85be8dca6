import type { WorkerEnv as HubBindings } from "../src/runtime/worker-env";

declare global {
  namespace Cloudflare {
    interface Env extends HubBindings {
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
      durableNamespaces: "ProjectRoom" | "ServerLink" | "WebhookEndpoint" | "TelegramChat" | "TelemetryExporter" | "CodeReviewer";
    }
  }
}
