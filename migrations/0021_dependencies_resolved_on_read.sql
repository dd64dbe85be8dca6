-- A completion writes no row of the dependencies on its task: a dependency is resolved when its row says so (written
-- related, or on an upstream already done) or when its upstream is done, at the upstream's completed_at. The triggers
-- keeping tasks.blocked read it so, and a task's change to done unblocks the tasks it was the last blocker of.
DROP TRIGGER `tasks_blocked_on_insert`;--> statement-breakpoint
CREATE TRIGGER `tasks_blocked_on_insert` AFTER INSERT ON `task_dependencies`
WHEN NEW.dependency_type != 'related' AND NEW.resolved = 0
BEGIN
	UPDATE `tasks` SET `blocked` = 1 WHERE `id` = NEW.task_id AND `blocked` = 0
		AND (SELECT u.status FROM `tasks` u WHERE u.id = NEW.depends_on_task_id) != 'done';
END;--> statement-breakpoint
DROP TRIGGER `tasks_blocked_on_update`;--> statement-breakpoint
CREATE TRIGGER `tasks_blocked_on_update` AFTER UPDATE OF `resolved`, `dependency_type` ON `task_dependencies`
BEGIN
	UPDATE `tasks` SET `blocked` = NOT `blocked` WHERE `id` = NEW.task_id AND `blocked` != EXISTS (
		SELECT 1 FROM `task_dependencies` d JOIN `tasks` u ON u.id = d.depends_on_task_id
		WHERE d.task_id = NEW.task_id AND d.dependency_type != 'related' AND d.resolved = 0 AND u.status != 'done');
END;--> statement-breakpoint
DROP TRIGGER `tasks_blocked_on_delete`;--> statement-breakpoint
CREATE TRIGGER `tasks_blocked_on_delete` AFTER DELETE ON `task_dependencies`
WHEN OLD.dependency_type != 'related' AND OLD.resolved = 0
BEGIN
	UPDATE `tasks` SET `blocked` = 0 WHERE `id` = OLD.task_id AND `blocked` = 1 AND NOT EXISTS (
		SELECT 1 FROM `task_dependencies` d JOIN `tasks` u ON u.id = d.depends_on_task_id
		WHERE d.task_id = OLD.task_id AND d.dependency_type != 'related' AND d.resolved = 0 AND u.status != 'done');
END;--> statement-breakpoint
-- Done is final, so a task's change to done resolves every dependency on it once; only the tasks it held back are
-- written, and only those that nothing else holds back.
CREATE TRIGGER `tasks_unblocked_when_done` AFTER UPDATE OF `status` ON `tasks`
WHEN NEW.status = 'done' AND OLD.status != 'done'
BEGIN
	UPDATE `tasks` SET `blocked` = 0 WHERE `blocked` = 1 AND `id` IN (
		SELECT d.task_id FROM `task_dependencies` d WHERE d.depends_on_task_id = NEW.id AND d.dependency_type != 'related' AND d.resolved = 0)
	AND NOT EXISTS (
		SELECT 1 FROM `task_dependencies` d JOIN `tasks` u ON u.id = d.depends_on_task_id
		WHERE d.task_id = `tasks`.`id` AND d.dependency_type != 'related' AND d.resolved = 0 AND u.status != 'done');
END;
