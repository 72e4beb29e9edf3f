"""The Optuna bridge: unmodified Optuna code driven by xbo's optimizer."""

import math
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

import xbo

from support import needs_server, server_kwargs, unique

try:
    import optuna
except ImportError:  # Debian: python3-optuna
    optuna = None

REQUIRED = os.environ.get("XBO_REQUIRE_OPTUNA", "") not in ("", "0")


class WithoutOptunaTest(unittest.TestCase):
    def test_xbo_imports_without_optuna(self):
        # optuna set to None in sys.modules makes every import of it fail,
        # as on a machine without Optuna.
        code = (
            "import sys\n"
            "import xbo\n"
            "assert 'optuna' not in sys.modules, 'import xbo imported optuna'\n"
            "sys.modules['optuna'] = None\n"
            "assert xbo.Float('x', 0, 1).to_dict()['type'] == 'float'\n"
            "try:\n"
            "    import xbo.integration.optuna\n"
            "except ImportError as e:\n"
            "    print('ImportError:', e)\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("ImportError: xbo.integration.optuna needs Optuna", out.stdout)


class RequireOptunaTest(unittest.TestCase):
    @unittest.skipUnless(REQUIRED, "XBO_REQUIRE_OPTUNA is not set")
    def test_optuna_is_importable(self):
        self.assertIsNotNone(optuna, "XBO_REQUIRE_OPTUNA is set but %s cannot import optuna" % sys.executable)


@unittest.skipIf(optuna is None, "optuna is not installed")
class MappingTest(unittest.TestCase):
    def test_distributions_to_xbo(self):
        from optuna.distributions import CategoricalDistribution as C, FloatDistribution as F, IntDistribution as I
        from xbo.integration.optuna import xbo_param

        self.assertEqual(xbo_param("lr", F(1e-4, 1.0, log=True)), {"name": "lr", "type": "float", "low": 1e-4, "high": 1.0, "log": True})
        self.assertEqual(xbo_param("n", I(2, 9)), {"name": "n", "type": "int", "low": 2, "high": 9})
        self.assertEqual(xbo_param("c", C([16, True, "a"])), {"name": "c", "type": "categorical", "choices": [16, True, "a"]})
        self.assertEqual(xbo_param("q", F(0.0, 1.0, step=0.25)), {"name": "q", "type": "float", "low": 0.0, "high": 1.0, "step": 0.25})
        self.assertEqual(xbo_param("k", I(3, 9, step=2)), {"name": "k", "type": "int", "low": 3, "high": 9, "step": 2})
        self.assertEqual(xbo_param("n", I(1, 9, log=True, step=1)), {"name": "n", "type": "int", "low": 1, "high": 9, "log": True})
        self.assertIsNone(xbo_param("z", C([None, "a"])))
        self.assertIsNone(xbo_param("alike", C([1, 1.0])))
        self.assertIsNone(xbo_param("alike", C(["true", True])))

    def test_values_back_to_optuna(self):
        from optuna.distributions import CategoricalDistribution as C, FloatDistribution as F, IntDistribution as I
        from xbo.integration.optuna import optuna_value

        choices = C([16, True, 2.0, "a"])
        # typed, as current servers answer; and as text, as older ones did
        for given, want in [(16, 16), (True, True), (2.0, 2.0), ("a", "a"), ("16", 16), ("true", True), ("2", 2.0)]:
            got = optuna_value(choices, given)
            self.assertEqual((got, type(got)), (want, type(want)), given)
        with self.assertRaises(ValueError):
            optuna_value(choices, "b")
        self.assertEqual(optuna_value(F(0.1, 10.0, log=True), 10.000000000000002), 10.0)
        self.assertEqual(optuna_value(I(1, 5), 3.0), 3)

    def test_sampler_arguments(self):
        from xbo.integration.optuna import XBOSampler

        for kwargs in [{"study_name": ""}, {"optimizer": "ei"}, {"independent_sampler": "random"}, {"constraints_func": [0.0]}]:
            with self.assertRaises(ValueError):
                XBOSampler(**kwargs)


class BridgeBase(unittest.TestCase):
    """The bridge tests' sampler: a fresh xbo study, deleted afterwards."""

    def setUp(self):
        from xbo.integration.optuna import XBOSampler

        self.XBOSampler = XBOSampler
        optuna.logging.set_verbosity(optuna.logging.WARNING)

    def sampler(self, prefix, **kw):
        name = unique(prefix)
        self.addCleanup(lambda: xbo.delete_study(name, **server_kwargs()))
        kw.setdefault("optimizer", {"strategy": "ei", "seed": 5, "initial_size": 5})
        kw.setdefault("seed", 3)
        return self.XBOSampler(study_name=name, token=server_kwargs()["token"], url=server_kwargs()["url"], **kw)


@needs_server
@unittest.skipIf(optuna is None, "optuna is not installed")
class BridgeTest(BridgeBase):

    def linked(self, xstudy):
        """xbo trials by the number of the Optuna trial they record."""
        return {t.user_attrs["optuna_trial"]: t for t in xstudy.trials}

    def test_xbo_proposes_optuna_evaluates(self):
        sampler = self.sampler("bridge")
        study = optuna.create_study(sampler=sampler)

        def objective(trial):
            x = trial.suggest_float("x", -5.0, 5.0)
            n = trial.suggest_int("n", 1, 6)
            c = trial.suggest_categorical("c", [16, 32, True])
            lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
            trial.report(x * x, 0)
            trial.set_user_attr("width", c if c is not True else 0)
            return (x - 1.0) ** 2 + n + (0.0 if c == 32 else 1.0) + abs(math.log10(lr) + 2)

        study.optimize(objective, n_trials=14)
        xstudy = sampler.xbo_study
        self.assertIsNotNone(xstudy)
        self.assertEqual(xstudy.direction, "minimize")
        self.assertEqual(sorted(p["name"] for p in xstudy.space["params"]), ["c", "lr", "n", "x"])
        self.assertEqual([p["log"] for p in xstudy.space["params"] if p["name"] == "lr"], [True])
        by_optuna = self.linked(xstudy)
        self.assertEqual(sorted(by_optuna), list(range(14)))
        acquisitions = [by_optuna[i].acquisition for i in range(14)]
        # Trial 0 ran before any trial had finished (no search space yet):
        # sampled by Optuna, then recorded; it counts toward xbo's initial
        # design of 5. Then EI.
        self.assertEqual(acquisitions[:5], ["imported"] + ["initial-design"] * 4)
        self.assertEqual(set(acquisitions[5:]) - {"random-fallback"}, {"ei"})
        for ot in study.trials:
            xt = by_optuna[ot.number]
            if ot.number > 0:
                self.assertEqual(ot.system_attrs["xbo:trial"], xt.number)
                self.assertEqual(xt.intermediate_values, {0: ot.params["x"] ** 2})
            self.assertEqual(xt.state, "complete")
            self.assertEqual(xt.value, ot.value)
            self.assertAlmostEqual(xt.params["x"], ot.params["x"], places=12)
            self.assertAlmostEqual(xt.params["lr"], ot.params["lr"], places=12)
            self.assertEqual(xt.params["n"], ot.params["n"])
            # the choice as the server answers it: typed, or its text
            self.assertIn(xt.params["c"], (ot.params["c"], str(ot.params["c"]).lower()))
            self.assertEqual(xt.user_attrs["width"], ot.user_attrs["width"])
        self.assertEqual(xstudy.best_value, study.best_value)

    def test_maximize_failures_and_enqueued(self):
        sampler = self.sampler("bridge-max")
        study = optuna.create_study(sampler=sampler, direction="maximize")
        study.enqueue_trial({"x": 0.25})

        def objective(trial):
            x = trial.suggest_float("x", 0.0, 1.0)
            if trial.number == 3:
                raise ValueError("diverged")
            return -((x - 0.5) ** 2)

        study.optimize(objective, n_trials=8, catch=(ValueError,))
        xstudy = sampler.xbo_study
        self.assertEqual(xstudy.direction, "maximize")
        trials = xstudy.trials
        # Optuna's trial 0 was the enqueued x = 0.25, recorded when the
        # study was created; trial 3 failed in Optuna and in xbo.
        first = trials[0]
        self.assertEqual((first.acquisition, first.params, first.value), ("imported", {"x": 0.25}, -0.0625))
        failed = [t for t in trials if t.state == "failed"]
        self.assertEqual(len(failed), 1)
        self.assertEqual(failed[0].user_attrs["optuna_trial"], 3)
        self.assertIn("Optuna objective failed", failed[0].fail_reason)
        self.assertEqual(len(trials), 8)
        self.assertEqual(xstudy.best_value, study.best_value)

    def test_enqueued_later_is_recorded_not_asked(self):
        sampler = self.sampler("bridge-enq")
        study = optuna.create_study(sampler=sampler)
        objective = lambda t: (t.suggest_float("x", 0.0, 1.0) - 0.3) ** 2  # noqa: E731
        study.optimize(objective, n_trials=3)
        study.enqueue_trial({"x": 0.75})
        study.optimize(objective, n_trials=1)
        xt = self.linked(sampler.xbo_study)[3]
        self.assertEqual((xt.acquisition, xt.params["x"], xt.state), ("imported", 0.75, "complete"))
        self.assertNotIn("xbo:trial", study.trials[3].system_attrs)
        self.assertEqual(len(sampler.xbo_study.trials), 4)

    def test_unsupported_parameters_sampled_independently(self):
        sampler = self.sampler("bridge-step")
        study = optuna.create_study(sampler=sampler)

        def objective(trial):
            x = trial.suggest_float("x", 0.0, 1.0)
            q = trial.suggest_float("q", 0.0, 1.0, step=0.25)
            k = trial.suggest_categorical("k", [None, "a"])
            return x + q + (k is None)

        study.optimize(objective, n_trials=4)
        xstudy = sampler.xbo_study
        # The stepped range is xbo's; the None choice is not.
        self.assertEqual(sorted(p["name"] for p in xstudy.space["params"]), ["q", "x"])
        for t in study.trials:
            self.assertIn(t.params["q"], (0.0, 0.25, 0.5, 0.75, 1.0))
        self.assertEqual(len(xstudy.trials), 4)

    def test_a_parameter_no_longer_suggested_leaves_the_space(self):
        sampler = self.sampler("bridge-shrink")
        study = optuna.create_study(sampler=sampler)

        def objective(trial):
            x = trial.suggest_float("x", 0.0, 1.0)
            if trial.number < 3:
                return x + trial.suggest_float("y", 0.0, 1.0)
            return x

        study.optimize(objective, n_trials=3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            study.optimize(objective, n_trials=3)
        self.assertTrue(any("'y' is sampled independently" in str(w.message) for w in caught), [str(w.message) for w in caught])
        # Trial 3 did not suggest y, and no categorical says when y is
        # suggested: the next generation of the xbo study has x only and
        # holds every trial, the later ones proposed by xbo.
        xtrials = sampler.xbo_study.trials
        self.assertEqual([p["name"] for p in sampler.xbo_study.space["params"]], ["x"])
        self.assertEqual([t.user_attrs["optuna_trial"] for t in xtrials], list(range(6)))
        self.assertEqual({t.state for t in xtrials}, {"complete"})
        for ot, xt in zip(study.trials, xtrials):
            self.assertEqual((ot.params["x"], ot.value), (xt.params["x"], xt.value))

    def test_parallel_optuna_jobs(self):
        sampler = self.sampler("bridge-jobs")
        study = optuna.create_study(sampler=sampler)
        study.optimize(lambda t: (t.suggest_float("x", -1.0, 1.0)) ** 2, n_trials=10, n_jobs=3)
        xtrials = sampler.xbo_study.trials
        numbers = sorted(t.user_attrs["optuna_trial"] for t in xtrials)
        # Trials that ran before the first one finished were sampled by
        # Optuna and recorded afterwards; none is missing or twice.
        self.assertEqual(numbers, list(range(10)))
        self.assertEqual({t.state for t in xtrials}, {"complete"})

    def test_resumed_optuna_study_continues_the_xbo_study(self):
        with tempfile.TemporaryDirectory() as tmp:
            storage = "sqlite:///" + os.path.join(tmp, "optuna.db")
            first = self.sampler("bridge-resume")
            name = first._study_name
            objective = lambda t: (t.suggest_float("x", 0.0, 1.0) - 0.3) ** 2  # noqa: E731
            optuna.create_study(study_name="resume", storage=storage, sampler=first).optimize(objective, n_trials=4)
            # Another process, later: a new sampler on the same studies.
            second = self.XBOSampler(study_name=name, **server_kwargs(), optimizer={"strategy": "ei", "seed": 5, "initial_size": 5})
            study = optuna.load_study(study_name="resume", storage=storage, sampler=second)
            study.optimize(objective, n_trials=3)
            optuna_trials = study.trials
        xtrials = second.xbo_study.trials
        self.assertEqual([t.user_attrs["optuna_trial"] for t in xtrials], list(range(7)))
        self.assertEqual([t.user_attrs["optuna_study"] for t in xtrials], ["resume"] * 7)
        self.assertEqual([t.acquisition for t in xtrials][:5], ["imported"] + ["initial-design"] * 4)
        self.assertEqual(set(t.acquisition for t in xtrials[5:]) - {"random-fallback"}, {"ei"})
        for ot, xt in zip(optuna_trials, xtrials):
            self.assertEqual((ot.params["x"], ot.value), (xt.params["x"], xt.value))

    def test_pruned_trials(self):
        sampler = self.sampler("bridge-prune")
        study = optuna.create_study(sampler=sampler, pruner=optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0))

        def objective(trial):
            x = trial.suggest_float("x", 0.0, 1.0)
            for step in range(4):
                trial.report(1.0 - 0.1 * step if trial.number < 3 else 100.0, step)
                if trial.should_prune():
                    raise optuna.TrialPruned()
            return x

        study.optimize(objective, n_trials=5)
        pruned = [t.number for t in study.trials if t.state == optuna.trial.TrialState.PRUNED]
        self.assertEqual(pruned, [3, 4])
        by_optuna = self.linked(sampler.xbo_study)
        for n in pruned:
            self.assertEqual(by_optuna[n].state, "pruned")
            self.assertEqual(by_optuna[n].intermediate_values, {0: 100.0})

    def test_multi_objective_example_with_constraints(self):
        # Binh and Korn's two-objective problem written as for any Optuna
        # sampler: the objective keeps its constraint values in a user
        # attribute, constraints_func reads them back.
        def objective(trial):
            x = trial.suggest_float("x", 0, 5)
            y = trial.suggest_float("y", 0, 3)
            v0 = 4 * x ** 2 + 4 * y ** 2
            v1 = (x - 5) ** 2 + (y - 5) ** 2
            c0 = (x - 5) ** 2 + y ** 2 - 25
            c1 = -((x - 8) ** 2) - (y + 3) ** 2 + 7.7
            trial.set_user_attr("constraint", (c0, c1))
            return v0, v1

        def constraints(trial):
            return trial.user_attrs["constraint"]

        sampler = self.sampler("bridge-mo", constraints_func=constraints)
        study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
        # Infeasible (c0 = 0.25), and on the front if constraints were ignored.
        study.enqueue_trial({"x": 0.0, "y": 0.5})
        study.optimize(objective, n_trials=16)

        xstudy = sampler.xbo_study
        self.assertEqual((xstudy.directions, xstudy.constraint_names), (["minimize", "minimize"], ["constraint_0", "constraint_1"]))
        by_optuna = self.linked(xstudy)
        self.assertEqual(sorted(by_optuna), list(range(16)))
        for ot in study.trials:
            xt = by_optuna[ot.number]
            self.assertEqual((xt.state, xt.values), ("complete", ot.values))
            self.assertEqual(xt.constraints, list(ot.user_attrs["constraint"]))
            self.assertEqual(list(ot.system_attrs["constraints"]), xt.constraints)
        self.assertEqual(by_optuna[0].acquisition, "imported")
        model = [n for n, t in by_optuna.items() if t.acquisition == "ehvi"]
        self.assertGreaterEqual(len(model), 8, "xbo's proposals after its design were not EHVI's")

        def front(trials, feasible_only):
            pool = [t for t in trials if not feasible_only or all(c <= 0 for c in t.system_attrs["constraints"])]
            return sorted(
                t.number for t in pool
                if not any(all(a <= b for a, b in zip(o.values, t.values)) and o.values != t.values for o in pool)
            )

        got = sorted(t.user_attrs["optuna_trial"] for t in xstudy.best_trials)
        self.assertEqual(got, front(study.trials, True))
        self.assertIn(0, front(study.trials, False))
        self.assertNotIn(0, got)
        for t in xstudy.best_trials:
            self.assertTrue(all(c <= 0 for c in t.constraints), t)

    def test_directions_and_a_wrong_constraint_count(self):
        sampler = self.sampler("bridge-mo-max", constraints_func=lambda t: [t.params["x"] - 0.8] * (1 if t.number < 4 else 2))
        study = optuna.create_study(directions=["maximize", "minimize"], sampler=sampler)

        def objective(trial):
            return trial.suggest_float("x", 0.0, 1.0), trial.suggest_float("y", 0.0, 1.0)

        study.optimize(objective, n_trials=4)
        xstudy = sampler.xbo_study
        self.assertEqual((xstudy.directions, xstudy.constraint_names), (["maximize", "minimize"], ["constraint_0"]))
        for ot, xt in zip(study.trials, xstudy.trials):
            self.assertEqual((xt.values, xt.constraints), (ot.values, [ot.params["x"] - 0.8]))
        with self.assertRaisesRegex(ValueError, "constraints_func returned 2 values for trial 4; xbo study .* has 1 constraints"):
            study.optimize(objective, n_trials=1)
        failed = self.linked(xstudy)[4]
        self.assertEqual(failed.state, "failed")
        self.assertIn("constraints_func", failed.fail_reason)

    def test_single_objective_with_constraints(self):
        sampler = self.sampler("bridge-so-constrained", constraints_func=lambda t: [0.5 - t.params["x"]])
        study = optuna.create_study(sampler=sampler)
        study.enqueue_trial({"x": 0.0})  # the smallest value, infeasible
        study.optimize(lambda t: t.suggest_float("x", -2.0, 2.0) ** 2, n_trials=8)
        xstudy = sampler.xbo_study
        self.assertEqual((xstudy.direction, xstudy.constraint_names), ("minimize", ["constraint_0"]))
        feasible = [t.value for t in study.trials if t.params["x"] >= 0.5]
        self.assertTrue(feasible)
        self.assertEqual(xstudy.best_value, min(feasible))
        self.assertLess(min(t.value for t in study.trials), xstudy.best_value)


if __name__ == "__main__":
    unittest.main()
