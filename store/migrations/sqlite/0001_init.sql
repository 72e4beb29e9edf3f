CREATE TABLE studies (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL UNIQUE,
    direction   TEXT    NOT NULL CHECK (direction IN ('minimize', 'maximize')),
    space       TEXT    NOT NULL,
    optimizer   TEXT    NOT NULL,
    created_us  INTEGER NOT NULL,
    version     INTEGER NOT NULL DEFAULT 0,
    next_number INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE trials (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id      INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    number        INTEGER NOT NULL,
    state         TEXT    NOT NULL CHECK (state IN ('pending', 'running', 'complete', 'failed', 'expired')),
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

CREATE INDEX trials_by_state ON trials (study_id, state, number);
CREATE INDEX trials_by_version ON trials (study_id, version);
