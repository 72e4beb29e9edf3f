-- Several objectives and constraints: a trial's objective values (a JSON
-- array, one per objective of the study's space, the first also in value)
-- and constraint values (a JSON array; feasible when every one is ≤ 0),
-- NULL for a single-objective, unconstrained trial. infeasible is 1 when a
-- constraint value is above 0, so that the best-trial queries skip such
-- trials through the same index as before.
ALTER TABLE trials ADD COLUMN objective_values TEXT;
ALTER TABLE trials ADD COLUMN constraint_values TEXT;
ALTER TABLE trials ADD COLUMN infeasible SMALLINT NOT NULL DEFAULT 0;

-- The shape of a study's outcomes, from its space, so that every tell is
-- checked against it in the statement or transaction that stores it:
-- how many objective values (1: value alone) and constraint values.
ALTER TABLE studies ADD COLUMN n_objectives INTEGER NOT NULL DEFAULT 1;
ALTER TABLE studies ADD COLUMN n_constraints INTEGER NOT NULL DEFAULT 0;
