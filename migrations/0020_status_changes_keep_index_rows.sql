-- A task's server and session index entries are keyed by completed_at, not status: assigning and finishing a task
-- write them, its changes of status in between (start, plan, help) do not. Unfinished tasks (no completed_at) come first.
DROP INDEX `tasks_server_status`;--> statement-breakpoint
DROP INDEX `tasks_session_status`;--> statement-breakpoint
CREATE INDEX `tasks_server_completed` ON `tasks` (`assigned_server_id`,`completed_at`) WHERE assigned_server_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_session_completed` ON `tasks` (`target_session_id`,`completed_at`) WHERE target_session_id IS NOT NULL;