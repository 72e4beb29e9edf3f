CREATE TABLE studies (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT   NOT NULL UNIQUE,
    direction   TEXT   NOT NULL CHECK (direction IN ('minimize', 'maximize')),
    space       TEXT   NOT NULL,
    optimizer   TEXT   NOT NULL,
    created_us  BIGINT NOT NULL,
    version     BIGINT NOT NULL DEFAULT 0,
    next_number BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE trials (
    id            BIGSERIAL PRIMARY KEY,
    study_id      BIGINT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    number        BIGINT NOT NULL,
    state         TEXT   NOT NULL CHECK (state IN ('pending', 'running', 'complete', 'failed', 'expired')),
    params        TEXT   NOT NULL,
    value         DOUBLE PRECISION,
    intermediate  TEXT   NOT NULL DEFAULT '[]',
    user_attrs    TEXT   NOT NULL DEFAULT '{}',
    worker        TEXT   NOT NULL DEFAULT '',
    acquisition   TEXT   NOT NULL DEFAULT '',
    fail_reason   TEXT   NOT NULL DEFAULT '',
    meta          TEXT   NOT NULL DEFAULT '{}',
    requeued_from BIGINT,
    created_us    BIGINT NOT NULL,
    started_us    BIGINT,
    deadline_us   BIGINT,
    finished_us   BIGINT,
    updated_us    BIGINT NOT NULL,
    version       BIGINT NOT NULL,
    UNIQUE (study_id, number)
);

CREATE INDEX trials_by_state ON trials (study_id, state, number);
CREATE INDEX trials_by_version ON trials (study_id, version);

-- Trial versions: a database-wide sequence, so a tell never waits for a
-- lock on its study row (which would serialize every tell on a commit).
CREATE SEQUENCE trial_version;
