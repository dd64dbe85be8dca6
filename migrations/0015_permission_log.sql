-- Each tool call an agent's hook saw. WITHOUT ROWID (written by hand: drizzle cannot say so): the primary key is the
-- table itself, so an entry is one row written, and one more in the task index when it has a task.
CREATE TABLE `permission_log` (
	`id` text NOT NULL,
	`project_id` text NOT NULL,
	`server_id` text NOT NULL,
	`session_id` text,
	`task_id` text,
	`tool_name` text NOT NULL,
	`tool_input` text NOT NULL,
	`tool_input_truncated` integer DEFAULT false NOT NULL,
	`decision` text NOT NULL,
	`matched_rule_id` text,
	`reason` text,
	`agent_name` text,
	`created_at` text NOT NULL,
	`received_at` text NOT NULL,
	PRIMARY KEY(`project_id`, `created_at`, `id`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `permission_log_task` ON `permission_log` (`task_id`,`created_at`,`id`) WHERE task_id IS NOT NULL;