DROP INDEX `tasks_waiting`;--> statement-breakpoint
ALTER TABLE `tasks` ADD `awaiting_approval` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_waiting` ON `tasks` (`project_id`,CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END,`created_at`,`id`) WHERE status = 'pending' AND requirements IS NOT NULL AND awaiting_approval = 0 AND blocked = 0;--> statement-breakpoint
ALTER TABLE `projects` ADD `settings` text DEFAULT '{}' NOT NULL;