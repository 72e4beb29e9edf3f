-- Idempotent asks: the key a client sends with an ask (its Idempotency-Key
-- header) is stored on the trial the ask handed out, in the transaction
-- that hands it out, so that the ask repeated with that key gets the same
-- trial instead of a new one. A key names one ask in the whole database, so
-- a key reused for another study can be recognised and refused.
ALTER TABLE trials ADD COLUMN ask_key TEXT;
CREATE UNIQUE INDEX trials_by_ask_key ON trials (ask_key) WHERE ask_key IS NOT NULL;
