CREATE TABLE `slack_channels` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`team_id` text NOT NULL,
	`channel_id` text NOT NULL,
	`events` text,
	`muted` integer DEFAULT false NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `slack_channels_project` ON `slack_channels` (`project_id`,`team_id`,`channel_id`);--> statement-breakpoint
CREATE INDEX `slack_channels_channel` ON `slack_channels` (`team_id`,`channel_id`);--> statement-breakpoint
CREATE TABLE `slack_installations` (
	`team_id` text PRIMARY KEY NOT NULL,
	`team_name` text,
	`bot_token_sealed` text NOT NULL,
	`bot_user_id` text,
	`hub_url` text,
	`source` text NOT NULL,
	`installed_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `slack_link_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `slack_links` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`team_id` text NOT NULL,
	`slack_user_id` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `slack_links_user_id_unique` ON `slack_links` (`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `slack_links_user` ON `slack_links` (`team_id`,`slack_user_id`);--> statement-breakpoint
CREATE TABLE `slack_oauth_states` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `slack_posts` (
	`team_id` text NOT NULL,
	`channel_id` text NOT NULL,
	`subject` text NOT NULL,
	`project_id` text NOT NULL,
	`ts` text NOT NULL,
	`thread_ts` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `slack_posts_subject` ON `slack_posts` (`team_id`,`channel_id`,`subject`);