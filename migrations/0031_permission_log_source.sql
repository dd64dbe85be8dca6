CREATE TABLE `permission_log_sessions` (
	`project_id` text NOT NULL,
	`session_id` text NOT NULL,
	`source` text NOT NULL,
	PRIMARY KEY(`project_id`, `session_id`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
ALTER TABLE `permission_log` ADD `source` text DEFAULT 'hook' NOT NULL;