-- Waiting tasks ready to run are indexed apart from blocked ones, so offering them does not pass every blocked task of
-- the project. Whether a task is blocked is kept on its row by triggers, whichever statement changes its dependencies.
DROP INDEX `tasks_waiting`;--> statement-breakpoint
ALTER TABLE `tasks` ADD `blocked` integer DEFAULT false NOT NULL;--> statement-breakpoint
UPDATE `tasks` SET `blocked` = 1 WHERE EXISTS (
	SELECT 1 FROM `task_dependencies` d WHERE d.task_id = `tasks`.`id` AND d.dependency_type != 'related' AND d.resolved = 0);--> statement-breakpoint
CREATE INDEX `tasks_waiting` ON `tasks` (`project_id`,CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END,`created_at`,`id`) WHERE status = 'pending' AND requirements IS NOT NULL AND blocked = 0;--> statement-breakpoint
-- Each trigger writes the task only when the flag changes (a new task is inserted with it already right).
CREATE TRIGGER `tasks_blocked_on_insert` AFTER INSERT ON `task_dependencies`
WHEN NEW.dependency_type != 'related' AND NEW.resolved = 0
BEGIN
	UPDATE `tasks` SET `blocked` = 1 WHERE `id` = NEW.task_id AND `blocked` = 0;
END;--> statement-breakpoint
CREATE TRIGGER `tasks_blocked_on_update` AFTER UPDATE OF `resolved`, `dependency_type` ON `task_dependencies`
BEGIN
	UPDATE `tasks` SET `blocked` = NOT `blocked` WHERE `id` = NEW.task_id AND `blocked` != EXISTS (
		SELECT 1 FROM `task_dependencies` d WHERE d.task_id = NEW.task_id AND d.dependency_type != 'related' AND d.resolved = 0);
END;--> statement-breakpoint
CREATE TRIGGER `tasks_blocked_on_delete` AFTER DELETE ON `task_dependencies`
WHEN OLD.dependency_type != 'related' AND OLD.resolved = 0
BEGIN
	UPDATE `tasks` SET `blocked` = 0 WHERE `id` = OLD.task_id AND `blocked` = 1 AND NOT EXISTS (
		SELECT 1 FROM `task_dependencies` d WHERE d.task_id = OLD.task_id AND d.dependency_type != 'related' AND d.resolved = 0);
END;
