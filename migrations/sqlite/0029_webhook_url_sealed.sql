-- Issue 28 (leftover of 28.3): a webhook URL can hold a token (a Slack incoming
-- webhook's path is one), so the whole URL is now sealed with Graft's key, as the
-- signing secret is, and `url` holds only what may be shown (domain::notify::shown_url).
-- A row set before this keeps its URL in `url` and an empty `url_ciphertext` until
-- Graft next reads it, which seals it (service::notify).
ALTER TABLE webhook_settings ADD COLUMN url_ciphertext TEXT NOT NULL DEFAULT '';
