CREATE TABLE `archive_batches` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`kind` text NOT NULL,
	`day` text NOT NULL,
	`key` text NOT NULL,
	`ids` text NOT NULL,
	`step` text NOT NULL,
	`count` integer,
	`sha256` text,
	`fingerprint` text,
	`seq_min` integer,
	`seq_max` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `archive_batches_step` ON `archive_batches` (`project_id`,`step`);--> statement-breakpoint
CREATE INDEX `archive_batches_seq` ON `archive_batches` (`project_id`,`seq_max`);--> statement-breakpoint
CREATE TABLE `archived_tasks` (
	`task_id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`batch_id` text NOT NULL,
	`key` text NOT NULL,
	`day` text NOT NULL,
	`seq_min` integer,
	`seq_max` integer,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `project_exports` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`status` text NOT NULL,
	`dataref_id` text,
	`size` integer,
	`error` text,
	`requested_by` text NOT NULL,
	`created_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `project_exports_project` ON `project_exports` (`project_id`,`created_at`);