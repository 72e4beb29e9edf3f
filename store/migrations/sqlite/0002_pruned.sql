-- Multi-fidelity: the trial state 'pruned', the study's pruner configuration,
-- and every intermediate value as a row, so that a pruner reads the values
-- other trials reported at one step through an index instead of decoding
-- every trial's intermediate column.
--
-- SQLite cannot change a CHECK constraint in place: the trials table is
-- rebuilt with the new list of states (same columns, same rows, same ids).
CREATE TABLE trials_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id      INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    number        INTEGER NOT NULL,
    state         TEXT    NOT NULL CHECK (state IN ('pending', 'running', 'complete', 'failed', 'pruned', 'expired')),
    params        TEXT    NOT NULL,
    value         REAL,
    intermediate  TEXT    NOT NULL DEFAULT '[]',
    user_attrs    TEXT    NOT NULL DEFAULT '{}',
    worker        TEXT    NOT NULL DEFAULT '',
    acquisition   TEXT    NOT NULL DEFAULT '',
    fail_reason   TEXT    NOT NULL DEFAULT '',
    meta          TEXT    NOT NULL DEFAULT '{}',
    requeued_from INTEGER,
    created_us    INTEGER NOT NULL,
    started_us    INTEGER,
    deadline_us   INTEGER,
    finished_us   INTEGER,
    updated_us    INTEGER NOT NULL,
    version       INTEGER NOT NULL,
    UNIQUE (study_id, number)
);
INSERT INTO trials_new (id, study_id, number, state, params, value, intermediate, user_attrs, worker, acquisition,
    fail_reason, meta, requeued_from, created_us, started_us, deadline_us, finished_us, updated_us, version)
SELECT id, study_id, number, state, params, value, intermediate, user_attrs, worker, acquisition,
    fail_reason, meta, requeued_from, created_us, started_us, deadline_us, finished_us, updated_us, version
FROM trials;
DROP TABLE trials;
ALTER TABLE trials_new RENAME TO trials;
CREATE INDEX trials_by_state ON trials (study_id, state, number);
CREATE INDEX trials_by_version ON trials (study_id, version);

ALTER TABLE studies ADD COLUMN pruner TEXT NOT NULL DEFAULT '{}';

CREATE TABLE intermediate_values (
    study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    number   INTEGER NOT NULL,
    step     INTEGER NOT NULL,
    value    REAL    NOT NULL,
    PRIMARY KEY (study_id, number, step)
) WITHOUT ROWID;
CREATE INDEX intermediate_values_by_step ON intermediate_values (study_id, step);

INSERT INTO intermediate_values (study_id, number, step, value)
SELECT t.study_id, t.number, json_extract(j.value, '$.step'), json_extract(j.value, '$.value')
FROM trials t, json_each(t.intermediate) j
WHERE t.intermediate <> '[]';
