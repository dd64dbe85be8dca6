CREATE TABLE `task_rollup` (
	`project_id` text NOT NULL,
	`day` text NOT NULL,
	`task_type` text NOT NULL,
	`pending` integer DEFAULT 0 NOT NULL,
	`assigned` integer DEFAULT 0 NOT NULL,
	`planning` integer DEFAULT 0 NOT NULL,
	`plan_review` integer DEFAULT 0 NOT NULL,
	`running` integer DEFAULT 0 NOT NULL,
	`needs_human` integer DEFAULT 0 NOT NULL,
	`done` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`retried` integer DEFAULT 0 NOT NULL,
	`cancelled` integer DEFAULT 0 NOT NULL,
	`d0` integer DEFAULT 0 NOT NULL,
	`d1` integer DEFAULT 0 NOT NULL,
	`d2` integer DEFAULT 0 NOT NULL,
	`d3` integer DEFAULT 0 NOT NULL,
	`d4` integer DEFAULT 0 NOT NULL,
	`d5` integer DEFAULT 0 NOT NULL,
	`d6` integer DEFAULT 0 NOT NULL,
	`d7` integer DEFAULT 0 NOT NULL,
	`d8` integer DEFAULT 0 NOT NULL,
	`d9` integer DEFAULT 0 NOT NULL,
	`d10` integer DEFAULT 0 NOT NULL,
	`d11` integer DEFAULT 0 NOT NULL,
	`d12` integer DEFAULT 0 NOT NULL,
	`d13` integer DEFAULT 0 NOT NULL,
	`d14` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`project_id`, `day`, `task_type`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;--> statement-breakpoint
DROP TRIGGER `task_open_counts_on_insert`;--> statement-breakpoint
DROP TRIGGER `task_open_counts_on_delete`;--> statement-breakpoint
DROP TRIGGER `task_open_counts_on_status`;--> statement-breakpoint
DROP TRIGGER `task_daily_done`;--> statement-breakpoint
DROP TRIGGER `task_daily_failed`;--> statement-breakpoint
DROP TRIGGER `task_daily_cancelled`;--> statement-breakpoint
DROP TRIGGER `task_daily_retried`;--> statement-breakpoint
-- The roll-ups of migration 0032 in one row per project, day and type: a change writes one roll-up row, where it wrote
-- up to three (open counts, the day's outcomes, the duration's bucket). The open counts kept so far go in a row of no
-- day (''), which the day's figures never read; a project's open counts sum all its rows.
INSERT INTO `task_rollup` (`project_id`, `day`, `task_type`, `pending`, `assigned`, `planning`, `plan_review`, `running`, `needs_human`, `done`, `failed`, `retried`, `cancelled`, `d0`, `d1`, `d2`, `d3`, `d4`, `d5`, `d6`, `d7`, `d8`, `d9`, `d10`, `d11`, `d12`, `d13`, `d14`)
	SELECT r.project_id, r.day, r.task_type, 0, 0, 0, 0, 0, 0, r.done, r.failed, r.retried, r.cancelled, (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 0), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 1), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 2), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 3), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 4), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 5), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 6), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 7), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 8), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 9), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 10), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 11), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 12), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 13), (SELECT coalesce(sum(x.`count`), 0) FROM `task_done_durations` x WHERE x.project_id = r.project_id AND x.day = r.day AND x.task_type = r.task_type AND x.bucket = 14) FROM `task_daily_rollup` r;--> statement-breakpoint
INSERT INTO `task_rollup` (`project_id`, `day`, `task_type`, `pending`, `assigned`, `planning`, `plan_review`, `running`, `needs_human`)
	SELECT project_id, '', '', pending, assigned, planning, plan_review, running, needs_human FROM `task_open_counts`;--> statement-breakpoint
-- Counted at write, in the statement that changes the task, whichever operation makes it; one trigger per kind of
-- change, each writing one row. Buckets as in 0032 (domain/task-rollup.ts).
CREATE TRIGGER `task_rollup_on_insert` AFTER INSERT ON `tasks`
BEGIN
	INSERT INTO `task_rollup` (`project_id`, `day`, `task_type`, `pending`, `assigned`, `planning`, `plan_review`, `running`, `needs_human`, `done`, `failed`, `retried`, `cancelled`, `d0`, `d1`, `d2`, `d3`, `d4`, `d5`, `d6`, `d7`, `d8`, `d9`, `d10`, `d11`, `d12`, `d13`, `d14`) VALUES (NEW.project_id, substr(NEW.updated_at, 1, 10), NEW.type, (NEW.status = 'pending'), (NEW.status = 'assigned'), (NEW.status = 'planning'), (NEW.status = 'plan_review'), (NEW.status = 'running'), (NEW.status = 'needs_human'), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
		ON CONFLICT(`project_id`, `day`, `task_type`) DO UPDATE SET `pending` = `pending` + excluded.`pending`, `assigned` = `assigned` + excluded.`assigned`, `planning` = `planning` + excluded.`planning`, `plan_review` = `plan_review` + excluded.`plan_review`, `running` = `running` + excluded.`running`, `needs_human` = `needs_human` + excluded.`needs_human`, `done` = `done` + excluded.`done`, `failed` = `failed` + excluded.`failed`, `retried` = `retried` + excluded.`retried`, `cancelled` = `cancelled` + excluded.`cancelled`, `d0` = `d0` + excluded.`d0`, `d1` = `d1` + excluded.`d1`, `d2` = `d2` + excluded.`d2`, `d3` = `d3` + excluded.`d3`, `d4` = `d4` + excluded.`d4`, `d5` = `d5` + excluded.`d5`, `d6` = `d6` + excluded.`d6`, `d7` = `d7` + excluded.`d7`, `d8` = `d8` + excluded.`d8`, `d9` = `d9` + excluded.`d9`, `d10` = `d10` + excluded.`d10`, `d11` = `d11` + excluded.`d11`, `d12` = `d12` + excluded.`d12`, `d13` = `d13` + excluded.`d13`, `d14` = `d14` + excluded.`d14`;
END;--> statement-breakpoint
CREATE TRIGGER `task_rollup_on_change` AFTER UPDATE OF `status`, `retry_count` ON `tasks`
WHEN NEW.status != OLD.status OR NEW.retry_count > OLD.retry_count
BEGIN
	INSERT INTO `task_rollup` (`project_id`, `day`, `task_type`, `pending`, `assigned`, `planning`, `plan_review`, `running`, `needs_human`, `done`, `failed`, `retried`, `cancelled`, `d0`, `d1`, `d2`, `d3`, `d4`, `d5`, `d6`, `d7`, `d8`, `d9`, `d10`, `d11`, `d12`, `d13`, `d14`)
		SELECT NEW.project_id, substr(NEW.updated_at, 1, 10), NEW.type, (NEW.status = 'pending') - (OLD.status = 'pending'), (NEW.status = 'assigned') - (OLD.status = 'assigned'), (NEW.status = 'planning') - (OLD.status = 'planning'), (NEW.status = 'plan_review') - (OLD.status = 'plan_review'), (NEW.status = 'running') - (OLD.status = 'running'), (NEW.status = 'needs_human') - (OLD.status = 'needs_human'), (NEW.status = 'done' AND OLD.status != 'done'), (NEW.status = 'failed' AND OLD.status != 'failed'), (NEW.retry_count > OLD.retry_count), (NEW.status = 'cancelled' AND OLD.status != 'cancelled'), (k.b = 0), (k.b = 1), (k.b = 2), (k.b = 3), (k.b = 4), (k.b = 5), (k.b = 6), (k.b = 7), (k.b = 8), (k.b = 9), (k.b = 10), (k.b = 11), (k.b = 12), (k.b = 13), (k.b = 14)
		FROM (SELECT CASE WHEN NEW.status != 'done' OR OLD.status = 'done' THEN -1 ELSE CASE WHEN s < 60 THEN 0 WHEN s < 120 THEN 1 WHEN s < 240 THEN 2 WHEN s < 480 THEN 3 WHEN s < 960 THEN 4 WHEN s < 1920 THEN 5 WHEN s < 3840 THEN 6 WHEN s < 7680 THEN 7 WHEN s < 15360 THEN 8 WHEN s < 30720 THEN 9 WHEN s < 61440 THEN 10 WHEN s < 122880 THEN 11 WHEN s < 245760 THEN 12 WHEN s < 491520 THEN 13 ELSE 14 END END AS b
			FROM (SELECT (julianday(NEW.updated_at) - julianday(NEW.created_at)) * 86400 AS s)) k WHERE 1
		ON CONFLICT(`project_id`, `day`, `task_type`) DO UPDATE SET `pending` = `pending` + excluded.`pending`, `assigned` = `assigned` + excluded.`assigned`, `planning` = `planning` + excluded.`planning`, `plan_review` = `plan_review` + excluded.`plan_review`, `running` = `running` + excluded.`running`, `needs_human` = `needs_human` + excluded.`needs_human`, `done` = `done` + excluded.`done`, `failed` = `failed` + excluded.`failed`, `retried` = `retried` + excluded.`retried`, `cancelled` = `cancelled` + excluded.`cancelled`, `d0` = `d0` + excluded.`d0`, `d1` = `d1` + excluded.`d1`, `d2` = `d2` + excluded.`d2`, `d3` = `d3` + excluded.`d3`, `d4` = `d4` + excluded.`d4`, `d5` = `d5` + excluded.`d5`, `d6` = `d6` + excluded.`d6`, `d7` = `d7` + excluded.`d7`, `d8` = `d8` + excluded.`d8`, `d9` = `d9` + excluded.`d9`, `d10` = `d10` + excluded.`d10`, `d11` = `d11` + excluded.`d11`, `d12` = `d12` + excluded.`d12`, `d13` = `d13` + excluded.`d13`, `d14` = `d14` + excluded.`d14`;
END;--> statement-breakpoint
-- An update of a row the project has, never an insert: when a project is deleted its tasks go with it, and its rows
-- may already be gone. A finished task (an archived one) counts in no open status, and writes nothing.
CREATE TRIGGER `task_rollup_on_delete` AFTER DELETE ON `tasks`
WHEN OLD.status IN ('pending', 'assigned', 'planning', 'plan_review', 'running', 'needs_human')
BEGIN
	UPDATE `task_rollup` SET `pending` = `pending` - (OLD.status = 'pending'), `assigned` = `assigned` - (OLD.status = 'assigned'), `planning` = `planning` - (OLD.status = 'planning'), `plan_review` = `plan_review` - (OLD.status = 'plan_review'), `running` = `running` - (OLD.status = 'running'), `needs_human` = `needs_human` - (OLD.status = 'needs_human')
		WHERE (`project_id`, `day`, `task_type`) = (SELECT `project_id`, `day`, `task_type` FROM `task_rollup` WHERE `project_id` = OLD.project_id LIMIT 1);
END;--> statement-breakpoint
DROP TABLE `task_daily_rollup`;--> statement-breakpoint
DROP TABLE `task_done_durations`;--> statement-breakpoint
DROP TABLE `task_open_counts`;--> statement-breakpoint
ALTER TABLE `tasks` ADD `log_from` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- A task's events are read from where the log stood when it was created, by the log's key (db/task-events.ts): the
-- tasks already here start from just before their first event, found while the task index is still there.
UPDATE `tasks` SET `log_from` = COALESCE((SELECT MIN(e.seq) - 1 FROM `events` e WHERE e.task_id = `tasks`.`id`), 0);--> statement-breakpoint
DROP INDEX `events_task`;
