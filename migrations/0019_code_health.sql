CREATE TABLE `code_health_snapshots` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`server_id` text NOT NULL,
	`session_id` text,
	`dataref_id` text NOT NULL,
	`health_score` integer NOT NULL,
	`health_grade` text NOT NULL,
	`tech_debt_hours` real NOT NULL,
	`summary` text NOT NULL,
	`scanned_at` text NOT NULL,
	`received_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`dataref_id`) REFERENCES `datarefs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `code_health_project` ON `code_health_snapshots` (`project_id`,`received_at`);