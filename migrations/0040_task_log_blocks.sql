CREATE TABLE `task_log_blocks` (
	`task_id` text NOT NULL,
	`block` integer NOT NULL,
	PRIMARY KEY(`task_id`, `block`),
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;--> statement-breakpoint
-- The blocks (4096 seqs, LOG_BLOCK in db/task-events.ts) holding events of each task beyond the block where the log
-- stood at its creation, so that a task's events are read from those blocks alone.
INSERT OR IGNORE INTO `task_log_blocks` (`task_id`, `block`)
	SELECT DISTINCT e.task_id, e.seq / 4096 FROM `events` e JOIN `tasks` t ON t.id = e.task_id
	WHERE e.project_id = t.project_id AND e.seq / 4096 <> (t.log_from + 1) / 4096;
--> statement-breakpoint
-- Kept by the log's own insert, in its transaction, whichever path appends: an event of a task beyond the block it was
-- created in lists its block (once: a row already there writes nothing). It reads the task's row, by its key.
CREATE TRIGGER `events_task_log_blocks` AFTER INSERT ON `events` WHEN NEW.task_id IS NOT NULL
BEGIN
	INSERT OR IGNORE INTO `task_log_blocks` (`task_id`, `block`)
		SELECT t.id, NEW.seq / 4096 FROM `tasks` t WHERE t.id = NEW.task_id AND NEW.seq / 4096 <> (t.log_from + 1) / 4096;
END;
