-- An idempotent answer keeps the project access its request was granted, so a replay is answered only to a caller
-- granted it still, and says whether its body is sealed (it holds a secret a replay hands out again).
ALTER TABLE `idempotency_keys` ADD `sealed` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `idempotency_keys` ADD `scope` text;