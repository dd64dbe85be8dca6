ALTER TABLE `tasks` ADD `extensions` text;--> statement-breakpoint
CREATE INDEX `agent_logs_task` ON `agent_logs` (`task_id`,`created_at`);