CREATE TABLE `file_transfers` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`session_id` text NOT NULL,
	`server_id` text NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`filename` text,
	`path` text,
	`dataref_id` text,
	`size` integer,
	`sha256` text,
	`error` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`server_id`) REFERENCES `servers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`dataref_id`) REFERENCES `datarefs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `file_transfers_waiting` ON `file_transfers` (`server_id`,`kind`,`created_at`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `file_transfers_session` ON `file_transfers` (`session_id`,`kind`,`created_at`);