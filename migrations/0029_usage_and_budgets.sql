CREATE TABLE `agent_session_links` (
	`agent_session_id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `budget_crossings` (
	`budget_id` text NOT NULL,
	`period_key` text NOT NULL,
	`at_percent` real NOT NULL,
	`action` text NOT NULL,
	`spent_usd` real NOT NULL,
	`spent_tokens` integer NOT NULL,
	`crossed_at` text NOT NULL,
	PRIMARY KEY(`budget_id`, `period_key`, `at_percent`),
	FOREIGN KEY (`budget_id`) REFERENCES `budgets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `budgets` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`scope` text NOT NULL,
	`task_id` text,
	`period` text,
	`limit_usd` real,
	`limit_tokens` integer,
	`actions` text NOT NULL,
	`state` text DEFAULT 'ok' NOT NULL,
	`spent_usd` real DEFAULT 0 NOT NULL,
	`spent_tokens` integer DEFAULT 0 NOT NULL,
	`period_key` text DEFAULT '' NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `budgets_project` ON `budgets` (`project_id`);--> statement-breakpoint
CREATE TABLE `session_usage` (
	`session_id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cache_read_tokens` integer DEFAULT 0 NOT NULL,
	`cache_write_tokens` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`api_ms` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `task_usage` (
	`task_id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cache_read_tokens` integer DEFAULT 0 NOT NULL,
	`cache_write_tokens` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`api_ms` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `telemetry_exports` (
	`project_id` text PRIMARY KEY NOT NULL,
	`endpoint` text NOT NULL,
	`headers` text,
	`include_content` integer DEFAULT false NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `usage_batches` (
	`project_id` text NOT NULL,
	`batch_id` text NOT NULL,
	`recorded_at` text NOT NULL,
	PRIMARY KEY(`project_id`, `batch_id`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `usage_batches_recorded` ON `usage_batches` (`recorded_at`);--> statement-breakpoint
CREATE TABLE `usage_daily` (
	`project_id` text NOT NULL,
	`day` text NOT NULL,
	`model` text NOT NULL,
	`server_id` text NOT NULL,
	`agent_type` text NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cache_read_tokens` integer DEFAULT 0 NOT NULL,
	`cache_write_tokens` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`api_ms` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`project_id`, `day`, `model`, `server_id`, `agent_type`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
