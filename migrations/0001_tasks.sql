CREATE TABLE `agent_logs` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`server_id` text NOT NULL,
	`task_id` text,
	`level` text NOT NULL,
	`message` text NOT NULL,
	`context` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `agent_logs_project` ON `agent_logs` (`project_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `events` (
	`project_id` text NOT NULL,
	`seq` integer NOT NULL,
	`type` text NOT NULL,
	`task_id` text,
	`actor` text NOT NULL,
	`data` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`project_id`, `seq`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `events_task` ON `events` (`task_id`);--> statement-breakpoint
CREATE TABLE `interventions` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text,
	`project_id` text NOT NULL,
	`intervention_type` text NOT NULL,
	`question` text NOT NULL,
	`context` text,
	`status` text NOT NULL,
	`response` text,
	`responded_by` text,
	`responded_at` text,
	`asked_by` text NOT NULL,
	`target_session_id` text,
	`server_id` text,
	`correlation_id` text,
	`options` text,
	`expires_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `interventions_task` ON `interventions` (`task_id`,`status`);--> statement-breakpoint
CREATE INDEX `interventions_project` ON `interventions` (`project_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `interventions_expiry` ON `interventions` (`project_id`,`expires_at`) WHERE expires_at IS NOT NULL AND status = 'pending';--> statement-breakpoint
CREATE TABLE `task_dependencies` (
	`task_id` text NOT NULL,
	`depends_on_task_id` text NOT NULL,
	`project_id` text NOT NULL,
	`dependency_type` text NOT NULL,
	`contract_key` text,
	`resolved` integer DEFAULT false NOT NULL,
	`resolved_at` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`task_id`, `depends_on_task_id`),
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`depends_on_task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `task_dependencies_upstream` ON `task_dependencies` (`depends_on_task_id`);--> statement-breakpoint
CREATE TABLE `task_notes` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`project_id` text NOT NULL,
	`author` text NOT NULL,
	`content` text NOT NULL,
	`urgent` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `task_notes_task` ON `task_notes` (`task_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`title` text NOT NULL,
	`spec` text NOT NULL,
	`type` text NOT NULL,
	`priority` text NOT NULL,
	`status` text NOT NULL,
	`target_repo` text,
	`target_branch` text,
	`acceptance_criteria` text NOT NULL,
	`structured_spec` text,
	`requirements` text,
	`result` text,
	`result_structured` integer DEFAULT false NOT NULL,
	`error_code` text,
	`progress` real,
	`progress_message` text,
	`plan` text,
	`plan_feedback` text,
	`require_plan` integer DEFAULT false NOT NULL,
	`assigned_server_id` text,
	`target_session_id` text,
	`source_session_id` text,
	`created_by` text NOT NULL,
	`timeout_seconds` integer,
	`deadline_at` text,
	`warnings` text NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`started_at` text,
	`completed_at` text,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`assigned_server_id`) REFERENCES `servers`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`target_session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`source_session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `tasks_project_created` ON `tasks` (`project_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_server_status` ON `tasks` (`assigned_server_id`,`status`);--> statement-breakpoint
CREATE INDEX `tasks_session_status` ON `tasks` (`target_session_id`,`status`);--> statement-breakpoint
CREATE INDEX `tasks_deadline` ON `tasks` (`project_id`,`deadline_at`) WHERE deadline_at IS NOT NULL;