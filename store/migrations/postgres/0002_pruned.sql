-- Multi-fidelity: the trial state 'pruned', the study's pruner configuration,
-- and every intermediate value as a row, so that a pruner reads the values
-- other trials reported at one step through an index instead of decoding
-- every trial's intermediate column.
ALTER TABLE trials DROP CONSTRAINT trials_state_check;
ALTER TABLE trials ADD CONSTRAINT trials_state_check
    CHECK (state IN ('pending', 'running', 'complete', 'failed', 'pruned', 'expired'));

ALTER TABLE studies ADD COLUMN pruner TEXT NOT NULL DEFAULT '{}';

CREATE TABLE intermediate_values (
    study_id BIGINT           NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    number   BIGINT           NOT NULL,
    step     BIGINT           NOT NULL,
    value    DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (study_id, number, step)
);
CREATE INDEX intermediate_values_by_step ON intermediate_values (study_id, step);

INSERT INTO intermediate_values (study_id, number, step, value)
SELECT t.study_id, t.number, (e->>'step')::bigint, (e->>'value')::double precision
FROM trials t, json_array_elements(t.intermediate::json) e
WHERE t.intermediate <> '[]';
