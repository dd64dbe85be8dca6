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
