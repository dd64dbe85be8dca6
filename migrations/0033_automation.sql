CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`template_id` text,
	`template_name` text NOT NULL,
	`source` text NOT NULL,
	`schedule_id` text,
	`slot` text,
	`trigger_id` text,
	`delivery_id` text,
	`parameters` text NOT NULL,
	`task_ids` text NOT NULL,
	`skipped` text,
	`created_by` text NOT NULL,
	`started_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `runs_project_started` ON `runs` (`project_id`,`started_at`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `runs_schedule_slot` ON `runs` (`schedule_id`,`slot`) WHERE schedule_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `runs_trigger_delivery` ON `runs` (`trigger_id`,`delivery_id`) WHERE trigger_id IS NOT NULL AND delivery_id IS NOT NULL;--> statement-breakpoint
CREATE TABLE `schedules` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`template_id` text NOT NULL,
	`name` text,
	`cron` text NOT NULL,
	`timezone` text NOT NULL,
	`parameters` text NOT NULL,
	`missed` text NOT NULL,
	`overlap` text NOT NULL,
	`paused` integer DEFAULT false NOT NULL,
	`last_slot` text,
	`next_run_at` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`template_id`) REFERENCES `templates`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `schedules_due` ON `schedules` (`project_id`,`next_run_at`) WHERE next_run_at IS NOT NULL;--> statement-breakpoint
CREATE TABLE `templates` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`parameters` text NOT NULL,
	`tasks` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `templates_project_name` ON `templates` (`project_id`,`name`);--> statement-breakpoint
CREATE TABLE `triggers` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`template_id` text NOT NULL,
	`name` text,
	`kind` text NOT NULL,
	`secret_hash` text NOT NULL,
	`secret_sealed` text NOT NULL,
	`parameters` text NOT NULL,
	`github` text,
	`paused` integer DEFAULT false NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`template_id`) REFERENCES `templates`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `triggers_project` ON `triggers` (`project_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `tasks` ADD `run_id` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `stalled_at` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `unassignable_at` text;--> statement-breakpoint
CREATE INDEX `tasks_run` ON `tasks` (`run_id`) WHERE run_id IS NOT NULL;