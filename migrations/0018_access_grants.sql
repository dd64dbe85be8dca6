CREATE TABLE `access_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`source_server_id` text NOT NULL,
	`target_server_id` text NOT NULL,
	`project_id` text NOT NULL,
	`privilege_level` text NOT NULL,
	`local_bind_port` integer NOT NULL,
	`target_port` integer NOT NULL,
	`ssh_username` text NOT NULL,
	`public_key` text NOT NULL,
	`sealed_private_key` text NOT NULL,
	`status` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`ended_at` text,
	FOREIGN KEY (`source_server_id`) REFERENCES `servers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_server_id`) REFERENCES `servers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `access_grants_source_port` ON `access_grants` (`source_server_id`,`local_bind_port`) WHERE status = 'active';--> statement-breakpoint
CREATE INDEX `access_grants_target` ON `access_grants` (`target_server_id`,`status`);