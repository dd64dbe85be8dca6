/**
 * One Durable Object per Slack channel a project posts to (named `team:channel`): posts the channel's notifications
 * from the outbox in order (outbox-lane.ts), paced, waiting as long as Slack says when it answers 429.
 */
import { OutboxLane } from "../outbox-lane";

export class SlackChannel extends OutboxLane {
  protected readonly kind = "slack";

  protected async drain() {
    await this.ctx.storage.deleteAlarm();
  }
}
