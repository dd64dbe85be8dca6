CREATE TABLE `approval_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`tool_pattern` text NOT NULL,
	`param_pattern` text,
	`action` text NOT NULL,
	`scope_type` text NOT NULL,
	`scope_id` text,
	`agent_filter` text DEFAULT 'all' NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `approval_rules_scope` ON `approval_rules` (`scope_type`,`scope_id`);