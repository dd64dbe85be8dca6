CREATE TABLE `code_reviews` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`task_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`status` text NOT NULL,
	`score` integer,
	`summary` text,
	`findings` text,
	`git_diff_stats` text NOT NULL,
	`reviewer_kind` text NOT NULL,
	`reviewer` text,
	`review_task_id` text,
	`error` text,
	`requested_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `code_reviews_task_attempt` ON `code_reviews` (`task_id`,`attempt`);--> statement-breakpoint
CREATE INDEX `code_reviews_project` ON `code_reviews` (`project_id`,`requested_at`);--> statement-breakpoint
CREATE TABLE `review_policies` (
	`project_id` text PRIMARY KEY NOT NULL,
	`policy` text NOT NULL,
	`api_key_sealed` text,
	`updated_by` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `tasks` ADD `review_status` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `review_attempt` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `tasks` ADD `review_of` text;