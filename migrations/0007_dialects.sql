ALTER TABLE `events` ADD `traceparent` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `client_id` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `client_request_hash` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `payload` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `context` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `routing` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `observability` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `error` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `retry_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `tasks` ADD `late_result` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `rejected_by` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `tasks` ADD `assigned_at` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `trace_id` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `traceparent` text;--> statement-breakpoint
CREATE UNIQUE INDEX `tasks_client_id` ON `tasks` (`project_id`,`client_id`) WHERE client_id IS NOT NULL;