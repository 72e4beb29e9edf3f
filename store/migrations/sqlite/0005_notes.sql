-- Notes: plain text a person writes about a study or a trial (from the
-- dashboard or the API), '' when there is none. A note is not part of a
-- trial's outcome: setting one changes neither the trial's version nor
-- its update time, so optimizers and explanation caches ignore it.
ALTER TABLE studies ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN note TEXT NOT NULL DEFAULT '';
