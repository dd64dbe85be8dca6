ALTER TABLE `tasks` ADD `log_from` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- A task's events are read from where the log stood when it was created, by the log's key (db/task-events.ts): the
-- tasks already here start from just before their first event, found while the task index is still there.
UPDATE `tasks` SET `log_from` = COALESCE((SELECT MIN(e.seq) - 1 FROM `events` e WHERE e.task_id = `tasks`.`id`), 0);--> statement-breakpoint
DROP INDEX `events_task`;
