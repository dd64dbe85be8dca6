CREATE TABLE `delivery_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`outbox_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`duration_ms` integer NOT NULL,
	`response_body` text,
	`at` text NOT NULL,
	FOREIGN KEY (`outbox_id`) REFERENCES `outbox`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `delivery_attempts_outbox` ON `delivery_attempts` (`outbox_id`);--> statement-breakpoint
CREATE TABLE `outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`target_kind` text NOT NULL,
	`target_id` text NOT NULL,
	`project_id` text NOT NULL,
	`seq` integer,
	`event_type` text NOT NULL,
	`payload` text,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text NOT NULL,
	`last_status_code` integer,
	`last_error` text,
	`created_at` text NOT NULL,
	`delivered_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `outbox_event` ON `outbox` (`target_kind`,`target_id`,`project_id`,`seq`);--> statement-breakpoint
CREATE INDEX `outbox_queue` ON `outbox` (`target_kind`,`target_id`,`status`,`created_at`,`seq`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text,
	`description` text,
	`enabled` integer NOT NULL,
	`disabled_reason` text,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhooks_project` ON `webhooks` (`project_id`,`enabled`);