-- An idempotent answer keeps the project access its request was granted, so a replay is answered only to a caller
-- granted it still, and says whether its body is sealed (it holds a secret a replay hands out again).
ALTER TABLE `idempotency_keys` ADD `sealed` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `idempotency_keys` ADD `scope` text;--> statement-breakpoint
-- Answers stored before this migration hold secrets in clear (a webhook's signing secret, a Telegram link code) and
-- no scope to check again: they are never replayed (a retry with such a key gets IDEMPOTENT_SECRET_NOT_REPLAYED).
UPDATE `idempotency_keys` SET `response_body` = NULL WHERE `response_body` LIKE '%whsec\_%' ESCAPE '\' OR `response_body` LIKE '%"deep_link"%';
