ALTER TABLE `sessions` ADD `mcp_status` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `git_diff_stats` text;