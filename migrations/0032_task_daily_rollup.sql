CREATE TABLE `task_daily_rollup` (
	`project_id` text NOT NULL,
	`day` text NOT NULL,
	`task_type` text NOT NULL,
	`done` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`retried` integer DEFAULT 0 NOT NULL,
	`cancelled` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`project_id`, `day`, `task_type`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `task_done_durations` (
	`project_id` text NOT NULL,
	`day` text NOT NULL,
	`task_type` text NOT NULL,
	`bucket` integer NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`project_id`, `day`, `task_type`, `bucket`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `task_open_counts` (
	`project_id` text PRIMARY KEY NOT NULL,
	`pending` integer DEFAULT 0 NOT NULL,
	`assigned` integer DEFAULT 0 NOT NULL,
	`planning` integer DEFAULT 0 NOT NULL,
	`plan_review` integer DEFAULT 0 NOT NULL,
	`running` integer DEFAULT 0 NOT NULL,
	`needs_human` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
-- The roll-ups are WITHOUT ROWID: a new row is then one row written, as a change to one is (no separate key index).
-- Counted at write: each trigger runs inside the statement that changes a task, so its counts commit or roll back with
-- the change, whichever operation of the room makes it (a transition, a hand-back, a batch assignment, a cancel).
-- Durations go in a fixed log-scale histogram: bucket b (0..13) holds those under 60·2^b seconds, 14 the rest
-- (domain/task-rollup.ts reads it back).
CREATE TRIGGER `task_open_counts_on_insert` AFTER INSERT ON `tasks`
BEGIN
	INSERT INTO `task_open_counts` (`project_id`, `pending`, `assigned`, `planning`, `plan_review`, `running`, `needs_human`) VALUES (NEW.project_id, (NEW.status = 'pending'), (NEW.status = 'assigned'), (NEW.status = 'planning'), (NEW.status = 'plan_review'), (NEW.status = 'running'), (NEW.status = 'needs_human'))
		ON CONFLICT(`project_id`) DO UPDATE SET `pending` = `pending` + excluded.`pending`, `assigned` = `assigned` + excluded.`assigned`, `planning` = `planning` + excluded.`planning`, `plan_review` = `plan_review` + excluded.`plan_review`, `running` = `running` + excluded.`running`, `needs_human` = `needs_human` + excluded.`needs_human`;
END;--> statement-breakpoint
CREATE TRIGGER `task_open_counts_on_delete` AFTER DELETE ON `tasks`
-- An update, never an insert: when a project is deleted its tasks go with it, and its counts row may already be gone.
BEGIN
	UPDATE `task_open_counts` SET `pending` = `pending` - (OLD.status = 'pending'), `assigned` = `assigned` - (OLD.status = 'assigned'), `planning` = `planning` - (OLD.status = 'planning'), `plan_review` = `plan_review` - (OLD.status = 'plan_review'), `running` = `running` - (OLD.status = 'running'), `needs_human` = `needs_human` - (OLD.status = 'needs_human')
		WHERE `project_id` = OLD.project_id;
END;--> statement-breakpoint
CREATE TRIGGER `task_open_counts_on_status` AFTER UPDATE OF `status` ON `tasks`
WHEN NEW.status != OLD.status
BEGIN
	INSERT INTO `task_open_counts` (`project_id`, `pending`, `assigned`, `planning`, `plan_review`, `running`, `needs_human`) VALUES (NEW.project_id, (NEW.status = 'pending') - (OLD.status = 'pending'), (NEW.status = 'assigned') - (OLD.status = 'assigned'), (NEW.status = 'planning') - (OLD.status = 'planning'), (NEW.status = 'plan_review') - (OLD.status = 'plan_review'), (NEW.status = 'running') - (OLD.status = 'running'), (NEW.status = 'needs_human') - (OLD.status = 'needs_human'))
		ON CONFLICT(`project_id`) DO UPDATE SET `pending` = `pending` + excluded.`pending`, `assigned` = `assigned` + excluded.`assigned`, `planning` = `planning` + excluded.`planning`, `plan_review` = `plan_review` + excluded.`plan_review`, `running` = `running` + excluded.`running`, `needs_human` = `needs_human` + excluded.`needs_human`;
END;--> statement-breakpoint
CREATE TRIGGER `task_daily_done` AFTER UPDATE OF `status` ON `tasks`
WHEN NEW.status = 'done' AND OLD.status != 'done'
BEGIN
	INSERT INTO `task_daily_rollup` (`project_id`, `day`, `task_type`, `done`) VALUES (NEW.project_id, substr(NEW.updated_at, 1, 10), NEW.type, 1)
		ON CONFLICT(`project_id`, `day`, `task_type`) DO UPDATE SET `done` = `done` + 1;
	INSERT INTO `task_done_durations` (`project_id`, `day`, `task_type`, `bucket`, `count`)
		VALUES (NEW.project_id, substr(NEW.updated_at, 1, 10), NEW.type, 
			(SELECT CASE WHEN s < 60 THEN 0 WHEN s < 120 THEN 1 WHEN s < 240 THEN 2 WHEN s < 480 THEN 3 WHEN s < 960 THEN 4 WHEN s < 1920 THEN 5 WHEN s < 3840 THEN 6 WHEN s < 7680 THEN 7 WHEN s < 15360 THEN 8 WHEN s < 30720 THEN 9 WHEN s < 61440 THEN 10 WHEN s < 122880 THEN 11 WHEN s < 245760 THEN 12 WHEN s < 491520 THEN 13 ELSE 14 END FROM (SELECT (julianday(NEW.updated_at) - julianday(NEW.created_at)) * 86400 AS s)), 1)
		ON CONFLICT(`project_id`, `day`, `task_type`, `bucket`) DO UPDATE SET `count` = `count` + 1;
END;--> statement-breakpoint
CREATE TRIGGER `task_daily_failed` AFTER UPDATE OF `status` ON `tasks`
WHEN NEW.status = 'failed' AND OLD.status != 'failed'
BEGIN
	INSERT INTO `task_daily_rollup` (`project_id`, `day`, `task_type`, `failed`) VALUES (NEW.project_id, substr(NEW.updated_at, 1, 10), NEW.type, 1)
		ON CONFLICT(`project_id`, `day`, `task_type`) DO UPDATE SET `failed` = `failed` + 1;
END;--> statement-breakpoint
CREATE TRIGGER `task_daily_cancelled` AFTER UPDATE OF `status` ON `tasks`
WHEN NEW.status = 'cancelled' AND OLD.status != 'cancelled'
BEGIN
	INSERT INTO `task_daily_rollup` (`project_id`, `day`, `task_type`, `cancelled`) VALUES (NEW.project_id, substr(NEW.updated_at, 1, 10), NEW.type, 1)
		ON CONFLICT(`project_id`, `day`, `task_type`) DO UPDATE SET `cancelled` = `cancelled` + 1;
END;--> statement-breakpoint
CREATE TRIGGER `task_daily_retried` AFTER UPDATE OF `retry_count` ON `tasks`
WHEN NEW.retry_count > OLD.retry_count
BEGIN
	INSERT INTO `task_daily_rollup` (`project_id`, `day`, `task_type`, `retried`) VALUES (NEW.project_id, substr(NEW.updated_at, 1, 10), NEW.type, 1)
		ON CONFLICT(`project_id`, `day`, `task_type`) DO UPDATE SET `retried` = `retried` + 1;
END;--> statement-breakpoint
-- The tasks already here: their open counts, and their finishes by the day of completed_at (retries before now are not known).
INSERT INTO `task_open_counts` (`project_id`, `pending`, `assigned`, `planning`, `plan_review`, `running`, `needs_human`)
	SELECT project_id, sum(status = 'pending'), sum(status = 'assigned'), sum(status = 'planning'), sum(status = 'plan_review'), sum(status = 'running'), sum(status = 'needs_human') FROM `tasks` GROUP BY project_id;--> statement-breakpoint
INSERT INTO `task_daily_rollup` (`project_id`, `day`, `task_type`, `done`, `failed`, `cancelled`)
	SELECT project_id, substr(coalesce(completed_at, updated_at), 1, 10) AS d, type, sum(status = 'done'), sum(status = 'failed'), sum(status = 'cancelled')
	FROM `tasks` WHERE status IN ('done', 'failed', 'cancelled') GROUP BY project_id, d, type;--> statement-breakpoint
INSERT INTO `task_done_durations` (`project_id`, `day`, `task_type`, `bucket`, `count`)
	SELECT project_id, d, type, CASE WHEN s < 60 THEN 0 WHEN s < 120 THEN 1 WHEN s < 240 THEN 2 WHEN s < 480 THEN 3 WHEN s < 960 THEN 4 WHEN s < 1920 THEN 5 WHEN s < 3840 THEN 6 WHEN s < 7680 THEN 7 WHEN s < 15360 THEN 8 WHEN s < 30720 THEN 9 WHEN s < 61440 THEN 10 WHEN s < 122880 THEN 11 WHEN s < 245760 THEN 12 WHEN s < 491520 THEN 13 ELSE 14 END AS b, count(*) FROM (
		SELECT project_id, substr(coalesce(completed_at, updated_at), 1, 10) AS d, type,
			(julianday(coalesce(completed_at, updated_at)) - julianday(created_at)) * 86400 AS s
		FROM `tasks` WHERE status = 'done')
	GROUP BY project_id, d, type, b;