DROP INDEX `sessions_open_name`;--> statement-breakpoint
ALTER TABLE `sessions` ADD `role` text DEFAULT 'worker' NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `pid` integer;--> statement-breakpoint
ALTER TABLE `sessions` ADD `tmux_name` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `exit_code` integer;--> statement-breakpoint
ALTER TABLE `sessions` ADD `error` text;--> statement-breakpoint
-- Sessions agents registered themselves are running; `active` is no longer a status.
UPDATE `sessions` SET `status` = 'running' WHERE `status` = 'active';--> statement-breakpoint
CREATE INDEX `sessions_server` ON `sessions` (`server_id`,`status`);--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_open_name` ON `sessions` (`server_id`,`name`) WHERE status IN ('starting', 'running');