/** Usage across every project the person sees. */
import { Empty } from "../ui/states";

export function UsageAll() {
  return (
    <section>
      <h1>Usage</h1>
      <Empty title="Usage across projects is not built yet." />
    </section>
  );
}
