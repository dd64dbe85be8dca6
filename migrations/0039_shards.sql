ALTER TABLE `projects` ADD `shard` text DEFAULT 'DB' NOT NULL;--> statement-breakpoint
ALTER TABLE `projects` ADD `moving_to` text;