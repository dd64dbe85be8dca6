CREATE TABLE `invites` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`role` text NOT NULL,
	`projects` text DEFAULT '[]' NOT NULL,
	`email` text,
	`expires_at` text NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`accepted_at` text,
	`accepted_by` text,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`accepted_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invites_token_hash_unique` ON `invites` (`token_hash`);--> statement-breakpoint
CREATE INDEX `invites_pending` ON `invites` (`accepted_at`,`expires_at`);