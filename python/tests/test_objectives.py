"""Studies with several objectives and constraints, against a real xbo serve."""

import math
import unittest

import xbo
from xbo._http import Connection
from xbo.space import space_document

from support import ScriptedServer, needs_server, server_kwargs, unique

SPACE = [xbo.Float("x", 0.0, 1.0), xbo.Float("y", 0.0, 1.0)]
PARAMS = [p.to_dict() for p in SPACE]


def error_and_speed(params):
    """Two objectives, error (minimized) and speed (maximized), and one
    constraint, feasible when x >= 0.3."""
    x, y = params["x"], params["y"]
    return (x, math.sqrt(x) - y), [0.3 - x]


def feasible_front(trials, directions):
    """The numbers of the complete feasible trials no other such trial
    dominates, by brute force."""
    sign = [1.0 if d == "minimize" else -1.0 for d in directions]
    pool = [t for t in trials if t.state == "complete" and (t.constraints is None or all(c <= 0 for c in t.constraints))]

    def dominates(a, b):
        pa = [s * v for s, v in zip(sign, a.values)]
        pb = [s * v for s, v in zip(sign, b.values)]
        return all(u <= v for u, v in zip(pa, pb)) and any(u < v for u, v in zip(pa, pb))

    return [t.number for t in pool if not any(dominates(o, t) for o in pool)]


class DocumentTest(unittest.TestCase):
    def test_objectives_and_constraints_in_the_space(self):
        self.assertEqual(
            space_document(SPACE, None, ["minimize", "maximize"], ["error", "speed"], ["memory"]),
            {"objectives": [{"name": "error", "direction": "minimize"}, {"name": "speed", "direction": "maximize"}],
             "constraints": ["memory"], "params": PARAMS},
        )
        # Unnamed objectives are named by the server; a count of
        # constraints names them constraint_0, ...
        self.assertEqual(
            space_document(SPACE, None, ["maximize", "minimize"], constraints=2),
            {"objectives": [{"direction": "maximize"}, {"direction": "minimize"}], "constraints": ["constraint_0", "constraint_1"], "params": PARAMS},
        )
        # One unnamed direction is the plain single-objective document.
        self.assertEqual(space_document(SPACE, None, ["maximize"]), {"objective": "maximize", "params": PARAMS})
        both = {"objectives": [{"name": "a", "direction": "minimize"}, {"name": "b", "direction": "maximize"}], "params": PARAMS}
        self.assertEqual(space_document(both, None, ["minimize", "maximize"], ["a", "b"]), both)
        self.assertEqual(space_document(both, None, constraints=["c"])["constraints"], ["c"])

    def test_refused(self):
        both = {"objectives": [{"name": "a", "direction": "minimize"}, {"name": "b", "direction": "maximize"}], "params": PARAMS}
        for call, error in [
            (lambda: space_document(SPACE, "minimize", ["minimize", "maximize"]), "not both"),
            (lambda: space_document(SPACE, None, []), "empty"),
            (lambda: space_document(SPACE, None, "minimize"), "must be a list"),
            (lambda: space_document(SPACE, None, ["minimize", "up"]), "'up'"),
            (lambda: space_document(SPACE, None, ["minimize", "maximize"], ["a"]), "1 objective names for 2 directions"),
            (lambda: space_document(SPACE, None, ["minimize", "maximize"], ["a", "a"]), "repeats"),
            (lambda: space_document(SPACE, None, constraints=-1), "count >= 0"),
            (lambda: space_document(SPACE, None, constraints=["m", ""]), "non-empty"),
            (lambda: space_document(both, None, ["minimize", "minimize"]), "disagree"),
            (lambda: space_document(both, None, ["minimize", "maximize"], ["a", "c"]), "disagree"),
            (lambda: space_document(dict(both, constraints=["c"]), None, constraints=2), "disagree"),
        ]:
            with self.assertRaisesRegex(ValueError, error):
                call()

    def test_arguments_checked_before_any_request(self):
        server = ScriptedServer(lambda m, p, b: (500, {"error": "no request was expected"}))
        self.addCleanup(server.close)
        with self.assertRaisesRegex(ValueError, "constraints_func needs the study's constraints declared"):
            xbo.create_study("s", SPACE, directions=["minimize", "maximize"], constraints_func=lambda t: [0.0], url=server.url)
        with self.assertRaisesRegex(ValueError, "not both"):
            xbo.create_study("s", SPACE, direction="minimize", directions=["minimize"], url=server.url)
        raw = {"name": "s", "direction": "minimize", "space": {"objectives": [{"name": "a", "direction": "minimize"},
               {"name": "b", "direction": "maximize"}], "constraints": ["c"], "params": PARAMS}}
        study = xbo.Study(Connection(server.url, retries=0), raw)
        self.assertEqual((study.directions, study.objective_names, study.constraint_names), (["minimize", "maximize"], ["a", "b"], ["c"]))
        for call, error in [
            (lambda: study.tell(3, [1.0, 2.0], constraints=[0.0, 1.0]), r"trial 3: 2 constraint values for the study's 1 constraints \(c\)"),
            (lambda: study.tell(3, [1.0, 2.0], constraints=["0"]), "not a number"),
            (lambda: study.tell(3, [1.0, 2.0]), r"study 's' has constraints \(c\); give tell\(\.\.\., constraints="),
            (lambda: study.tell(3, [1.0, 2.0], values=[1.0, 2.0], constraints=[0.0]), "value or values, not both"),
            (lambda: study.tell(3, state="failed", constraints=[0.0]), "complete trial only"),
            (lambda: study.add_trial({"x": 0.5, "y": 0.5}, [1.0, 2.0]), "give constraints="),
            (lambda: study.add_trial({"x": 0.5, "y": 0.5}, [1.0, 2.0, 3.0], constraints=[0.0]), r"holds 3 values; the study has 2 objectives \(a, b\)"),
            (lambda: study.add_trial({"x": 0.5, "y": 0.5}, [1.0, 2.0], constraints=[math.nan]), "NaN"),
            (lambda: study.optimize(lambda t: (0.0, 0.0), n_trials=1), "constraints_func="),
        ]:
            with self.assertRaisesRegex(ValueError, error):
                call()
        for attr in ("direction", "best_trial", "best_value", "best_params"):
            with self.assertRaisesRegex(RuntimeError, r"2 objectives \(a, b\).*best_trials|directions"):
                getattr(study, attr)
        with self.assertRaisesRegex(ValueError, "declares no constraints"):
            xbo.Study(Connection(server.url, retries=0), {"name": "t", "space": {"params": PARAMS}}, constraints_func=lambda t: [0.0])
        self.assertEqual(server.requests, [])


@needs_server
class MultiObjectiveStudyTest(unittest.TestCase):
    def create(self, prefix, space=SPACE, **kw):
        name = unique(prefix)
        kw.setdefault("optimizer", {"seed": 4, "initial_size": 6})
        study = xbo.create_study(name, space, **server_kwargs(), **kw)
        self.addCleanup(lambda: xbo.delete_study(name, **server_kwargs()))
        return study

    def test_optimize_two_objectives_with_a_constraint(self):
        seen = []

        def constraints_func(frozen):
            # The trial as it is about to be recorded.
            seen.append((frozen.number, frozen.state, frozen.values, frozen.user_attrs))
            return frozen.user_attrs["constraints"]

        def objective(trial):
            values, constraints = error_and_speed(trial.params)
            trial.set_user_attr("constraints", constraints)
            return values

        study = self.create("mo", directions=["minimize", "maximize"], objective_names=["error", "speed"],
                            constraints=["min_x"], constraints_func=constraints_func)
        study.enqueue_trial({"x": 0.1, "y": 0.0})  # infeasible, and on the front were it not for the constraint
        study.optimize(objective, n_trials=16)
        self.assertEqual((study.directions, study.objective_names, study.constraint_names),
                         (["minimize", "maximize"], ["error", "speed"], ["min_x"]))
        trials = study.trials
        self.assertEqual(len(trials), 16)
        for t in trials:
            values, constraints = error_and_speed(t.params)
            self.assertEqual((t.state, t.values, t.value, t.constraints), ("complete", list(values), values[0], constraints))
        self.assertEqual(seen, [(t.number, "complete", t.values, t.user_attrs) for t in trials])
        front = [t.number for t in study.best_trials]
        self.assertEqual(front, feasible_front(trials, study.directions))
        self.assertGreater(len(front), 1)
        self.assertEqual(trials[0].constraints, [0.3 - 0.1])
        self.assertNotIn(0, front)
        # Without the constraint trial 0 would be on the front: the check
        # above is not vacuous.
        unconstrained = [xbo.FrozenTrial(dict(t.raw, constraints=None), {}) for t in trials]
        self.assertIn(0, feasible_front(unconstrained, study.directions))
        for t in study.best_trials:
            self.assertLessEqual(t.constraints[0], 0.0)
        with self.assertRaisesRegex(RuntimeError, "best_trials"):
            study.best_trial
        with self.assertRaisesRegex(RuntimeError, "directions"):
            study.direction

        loaded = xbo.load_study(study.name, **server_kwargs())
        self.assertEqual((loaded.directions, loaded.objective_names, loaded.constraint_names), (study.directions, study.objective_names, ["min_x"]))
        self.assertIsNone(loaded.constraints_func)
        again = xbo.create_study(study.name, SPACE, directions=["minimize", "maximize"], constraints=["min_x"], load_if_exists=True, **server_kwargs())
        self.assertEqual(again.objective_names, ["error", "speed"])
        for kw, error in [
            ({"directions": ["minimize", "minimize"], "constraints": ["min_x"]}, "directions"),
            ({"directions": ["minimize", "maximize"], "objective_names": ["loss", "speed"], "constraints": ["min_x"]}, "objectives"),
            ({"directions": ["minimize", "maximize"]}, "constraints"),
            ({"direction": "minimize", "constraints": ["min_x"]}, "directions"),
        ]:
            with self.assertRaisesRegex(ValueError, error, msg=kw):
                xbo.create_study(study.name, SPACE, load_if_exists=True, **server_kwargs(), **kw)

    def test_bad_outcomes(self):
        study = self.create("mo-bad", directions=["minimize", "maximize"], objective_names=["error", "speed"], constraints=1)
        self.assertEqual(study.constraint_names, ["constraint_0"])
        for value, constraints, reason in [
            ([0.5, 0.1, 2.0], [0.0], "the value holds 3 values; the study has 2 objectives (error, speed)"),
            (0.5, [0.0], "the value is one number (0.5); the study has 2 objectives (error, speed), one value each"),
            ([0.5, math.nan], [0.0], "the value 1 (speed) is NaN"),
            ((0.5, "fast"), [0.0], "the value 1 (speed) is 'fast', not a number"),
            ([0.5, 0.1], [math.inf], "constraint value 0 (constraint_0) is positive infinity"),
        ]:
            t = study.ask()
            frozen = study.tell(t, value, constraints=constraints)
            self.assertEqual((frozen.state, frozen.fail_reason, frozen.values), ("failed", reason, None), value)
        # A wrong count of constraint values is a mistake in the code:
        # nothing is sent and the trial can still be told.
        t = study.ask()
        with self.assertRaisesRegex(ValueError, r"trial %d: 2 constraint values for the study's 1 constraints \(constraint_0\)" % t.number):
            study.tell(t, [0.5, 0.1], constraints=[0.0, 1.0])
        self.assertEqual(study.trial(t.number).state, "running")
        done = study.tell(t.number, values=(0.5, 0.25), constraints=(-1,))
        self.assertEqual((done.state, done.values, done.constraints), ("complete", [0.5, 0.25], [-1.0]))

        added = study.add_trial({"x": 0.75, "y": 0.5}, [0.2, 0.9], constraints=[-0.5])
        self.assertEqual((added.acquisition, added.values, added.constraints), ("imported", [0.2, 0.9], [-0.5]))
        self.assertEqual([t.number for t in study.best_trials], [added.number])

        # A trial told by number is read for the params constraints_func uses.
        study.constraints_func = lambda t: [t.params["x"] - 2.0]
        t = study.ask()
        self.assertEqual(study.tell(t.number, [0.3, 0.3]).constraints, [t.params["x"] - 2.0])

        # optimize: values of the wrong shape fail the trial and the run
        # goes on; a constraints_func answering the wrong count stops it.
        study.constraints_func = lambda t: [0.0]
        answers = iter([[1.0, 2.0, 3.0], 7.0, [math.nan, 1.0], [0.1, 0.2]])
        study.optimize(lambda t: next(answers), n_trials=4)
        last = study.trials[-4:]
        self.assertEqual([t.state for t in last], ["failed", "failed", "failed", "complete"])
        self.assertEqual(last[0].fail_reason, "the objective's value holds 3 values; the study has 2 objectives (error, speed)")
        self.assertIn("is one number (7.0)", last[1].fail_reason)
        self.assertEqual(last[2].fail_reason, "the objective's value 0 (error) is NaN")
        study.constraints_func = lambda t: [0.0, 0.0]
        with self.assertRaisesRegex(ValueError, "2 constraint values for the study's 1 constraints"):
            study.optimize(lambda t: [0.1, 0.2], n_trials=3)
        failed = study.trials[-1]
        self.assertEqual(failed.state, "failed")
        self.assertIn("2 constraint values", failed.fail_reason)

    def test_single_objective_study_takes_one_value(self):
        study = self.create("so-list")
        t = study.ask()
        frozen = study.tell(t, [1.0, 2.0])
        self.assertEqual((frozen.state, frozen.fail_reason), ("failed", "the value holds 2 values; the study has one objective"))
        t = study.ask()
        frozen = study.tell(t, [3.0])  # a list of one, as Optuna allows
        self.assertEqual((frozen.state, frozen.value, frozen.values, frozen.constraints), ("complete", 3.0, [3.0], None))
        with self.assertRaisesRegex(ValueError, "declares no constraints"):
            study.tell(study.ask(), 1.0, constraints=[0.0])
        with self.assertRaisesRegex(ValueError, "holds 2 values; the study has one objective"):
            study.add_trial({"x": 0.5, "y": 0.5}, [1.0, 2.0])
        self.assertEqual((study.directions, study.objective_names, study.constraint_names), (["minimize"], ["value"], []))
        self.assertEqual([t.number for t in study.best_trials], [study.best_trial.number])

    def test_single_objective_with_constraints(self):
        # The best trial is the best feasible one, not the smallest value.
        study = self.create("so-constrained", [xbo.Float("x", -2.0, 2.0)], constraints=["x_at_least_half"],
                            constraints_func=lambda t: [0.5 - t.params["x"]])
        with self.assertRaisesRegex(ValueError, "no trial is complete and feasible yet"):
            study.best_trial
        study.add_trial({"x": 0.0}, 0.0, constraints=[0.5])
        with self.assertRaisesRegex(ValueError, "no trial is complete and feasible yet"):
            study.best_trial
        study.optimize(lambda t: t.params["x"] ** 2, n_trials=10)
        trials = study.trials
        feasible = [t for t in trials if t.constraints[0] <= 0]
        self.assertTrue(feasible and len(feasible) < len(trials), [t.constraints for t in trials])
        best = min(feasible, key=lambda t: t.value)
        self.assertLess(min(t.value for t in trials), best.value)
        self.assertEqual((study.best_trial.number, study.best_value), (best.number, best.value))
        self.assertEqual([t.number for t in study.best_trials], [best.number])


if __name__ == "__main__":
    unittest.main()
