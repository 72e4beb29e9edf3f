"""The Optuna bridge as a faithful sampler: define-by-run spaces, every
distribution kind, every trial state, threads, and the server check at
creation. The project's own conformance tests of Optuna's sampler contract
(Optuna's own sampler suite is a measurement, docs/optuna.md)."""

import time
import unittest

import xbo

from support import needs_server, server_kwargs
from test_optuna import BridgeBase

try:
    import optuna
except ImportError:  # Debian: python3-optuna
    optuna = None

try:
    import sklearn.datasets
    import sklearn.ensemble
    import sklearn.model_selection
    import sklearn.svm
except ImportError:  # Debian: python3-sklearn
    sklearn = None

# What an xbo trial's acquisition is when xbo's model proposed it.
NOT_MODEL = {"imported", "enqueued", "initial-design", "random", "random-fallback"}
STATES = {"COMPLETE": "complete", "PRUNED": "pruned", "FAIL": "failed"}


@needs_server
@unittest.skipIf(optuna is None, "optuna is not installed")
class DynamicBridgeTest(BridgeBase):

    def assert_same_trials(self, study, xstudy):
        """Every finished Optuna trial is in the xbo study once, with its
        state, value and parameters."""
        finished = [t for t in study.trials if t.state.name in STATES]
        by_optuna = {}
        for xt in xstudy.trials:
            n = xt.user_attrs.get("optuna_trial")
            self.assertNotIn(n, by_optuna, "Optuna trial %s is in xbo twice" % n)
            by_optuna[n] = xt
        self.assertEqual(sorted(by_optuna), [t.number for t in finished])
        for ot in finished:
            xt = by_optuna[ot.number]
            self.assertEqual(xt.state, STATES[ot.state.name], "trial %d" % ot.number)
            if ot.state.name == "COMPLETE":
                self.assertEqual(xt.value, ot.value)
            for name, v in xt.params.items():
                self.assertAlmostEqual(v, ot.params[name], places=9, msg="trial %d: %s" % (ot.number, name))
        return by_optuna

    @unittest.skipIf(sklearn is None, "sklearn is not installed")
    def test_sklearn_simple_pattern(self):
        # optuna-examples' sklearn_simple.py pattern: the classifier picks
        # which of its parameters the trial suggests.
        data = sklearn.datasets.load_iris()

        def objective(trial):
            kind = trial.suggest_categorical("classifier", ["SVC", "RandomForest"])
            if kind == "SVC":
                model = sklearn.svm.SVC(C=trial.suggest_float("svc_c", 1e-10, 1e10, log=True), gamma="auto")
            else:
                depth = trial.suggest_int("rf_max_depth", 2, 32, log=True)
                model = sklearn.ensemble.RandomForestClassifier(max_depth=depth, n_estimators=10, random_state=0)
            return sklearn.model_selection.cross_val_score(model, data.data, data.target, cv=3).mean()

        sampler = self.sampler("sklearn-simple")
        study = optuna.create_study(direction="maximize", sampler=sampler)
        study.optimize(objective, n_trials=40)
        xstudy = sampler.xbo_study
        conditions = {p["name"]: p.get("condition") for p in xstudy.space["params"]}
        self.assertEqual(conditions, {
            "classifier": None,
            "svc_c": {"parent": "classifier", "values": ["SVC"]},
            "rf_max_depth": {"parent": "classifier", "values": ["RandomForest"]},
        })
        by_optuna = self.assert_same_trials(study, xstudy)
        acquisitions = [by_optuna[i].acquisition for i in range(40)]
        last_initial = max(i for i, a in enumerate(acquisitions) if a in ("initial-design", "imported", "enqueued"))
        after = acquisitions[last_initial + 1:]
        model = [a for a in after if a not in NOT_MODEL]
        self.assertGreaterEqual(len(after), 25, acquisitions)
        self.assertGreaterEqual(len(model) / len(after), 0.9, acquisitions)
        # The Optuna trials xbo proposed are linked to their xbo trials.
        for ot in study.trials[last_initial + 1:]:
            self.assertEqual(ot.system_attrs["xbo:trial"], by_optuna[ot.number].number)
        self.assertGreaterEqual(study.best_value, 0.95)

    def test_conditions_on_nested_branches_and_dropped_parameters(self):
        def objective(trial):
            opt = trial.suggest_categorical("opt", ["sgd", "adam"])
            lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
            if opt == "sgd":
                momentum = trial.suggest_float("momentum", 0.0, 0.9, step=0.1)
                if trial.suggest_categorical("nesterov", [True, False]):
                    return lr + momentum + trial.suggest_int("warmup", 0, 8, step=2)
                return lr + momentum
            return lr + trial.suggest_float("beta", 0.8, 0.99)

        sampler = self.sampler("nested")
        study = optuna.create_study(sampler=sampler)
        study.optimize(objective, n_trials=25)
        space = {p["name"]: p for p in sampler.xbo_study.space["params"]}
        self.assertEqual(space["momentum"]["condition"], {"parent": "opt", "values": ["sgd"]})
        self.assertEqual(space["momentum"]["step"], 0.1)
        self.assertEqual(space["beta"]["condition"], {"parent": "opt", "values": ["adam"]})
        self.assertEqual(space["warmup"]["condition"], {"parent": "nesterov", "values": [True]})
        self.assertEqual(space["warmup"]["step"], 2)
        self.assertNotIn("condition", space["lr"])
        self.assert_same_trials(study, sampler.xbo_study)
        for t in study.trials:
            if "momentum" in t.params:
                self.assertAlmostEqual(t.params["momentum"] * 10, round(t.params["momentum"] * 10), places=9)
            if "warmup" in t.params:
                self.assertIn(t.params["warmup"], (0, 2, 4, 6, 8))

    def test_every_distribution_kind_relative(self):
        def objective(trial):
            return (
                trial.suggest_float("x", -10, 10, step=0.5)
                + trial.suggest_int("k", 3, 9, step=2)
                + trial.suggest_float("lr", 1e-7, 1.0, log=True)
                + trial.suggest_int("n", 1, 100, log=True)
                + trial.suggest_float("u", -1.0, 1.0)
                + trial.suggest_int("m", 3, 10)
                + trial.suggest_categorical("c", [1, 10, 100])
            )

        sampler = self.sampler("kinds")
        study = optuna.create_study(sampler=sampler)
        study.optimize(objective, n_trials=12)
        by_optuna = self.assert_same_trials(study, sampler.xbo_study)
        for ot in study.trials:
            self.assertEqual(ot.params["x"] * 2, int(ot.params["x"] * 2))
            self.assertIn(ot.params["k"], (3, 5, 7, 9))
            self.assertIsInstance(ot.params["n"], int)
            if ot.number > 0:  # trial 0 ran before any finished: Optuna's
                self.assertEqual(ot.system_attrs["xbo:trial"], by_optuna[ot.number].number)
        # sample_relative answers any space Optuna passes, with Python types.
        space = {"x": optuna.distributions.FloatDistribution(-10, 10, step=0.5),
                 "k": optuna.distributions.IntDistribution(3, 9, step=2),
                 "fresh": optuna.distributions.FloatDistribution(0.0, 1.0)}
        trial = study._storage.get_trial(study._storage.create_new_trial(study._study_id))
        params = sampler.sample_relative(study, trial, space)
        self.assertEqual(sorted(params), ["fresh", "k", "x"])
        self.assertIs(type(params["x"]), float)
        self.assertIs(type(params["k"]), int)
        self.assertIn(params["k"], (3, 5, 7, 9))

    def test_nan_pruned_and_failed_objectives(self):
        def objective(trial):
            x = trial.suggest_float("x", 0.0, 1.0)
            trial.report(x, 0)
            if trial.number % 4 == 1:
                return float("nan")
            if trial.number % 4 == 2:
                raise optuna.TrialPruned()
            if trial.number % 4 == 3:
                raise RuntimeError("boom")
            return x

        sampler = self.sampler("states")
        study = optuna.create_study(sampler=sampler)
        study.optimize(objective, n_trials=12, catch=(RuntimeError,))
        self.assertEqual([t.state.name for t in study.trials][:4], ["COMPLETE", "FAIL", "PRUNED", "FAIL"])
        by_optuna = self.assert_same_trials(study, sampler.xbo_study)
        self.assertEqual(by_optuna[2].intermediate_values, {0: study.trials[2].params["x"]})

    def test_dynamic_space_with_threads(self):
        def objective(trial):
            if trial.suggest_categorical("kind", ["a", "b", "c"]) == "a":
                return trial.suggest_float("xa", 0.0, 1.0)
            return trial.suggest_int("nb", 0, 5)

        sampler = self.sampler("threads")
        study = optuna.create_study(sampler=sampler)
        study.optimize(objective, n_trials=18, n_jobs=3)
        space = {p["name"]: p.get("condition") for p in sampler.xbo_study.space["params"]}
        self.assertEqual(space["xa"], {"parent": "kind", "values": ["a"]})
        self.assertEqual(sorted(space["nb"]["values"]), ["b", "c"])
        self.assert_same_trials(study, sampler.xbo_study)

    def test_reseed_and_seed(self):
        # seed seeds xbo's optimizer too when its settings name none.
        settings = {"strategy": "ei", "initial_size": 5}
        first = self.sampler("seed-a", seed=7, optimizer=settings)
        second = self.sampler("seed-b", seed=7, optimizer=settings)
        objective = lambda t: t.suggest_float("x", 0.0, 1.0)  # noqa: E731
        a = optuna.create_study(sampler=first)
        b = optuna.create_study(sampler=second)
        a.optimize(objective, n_trials=6)
        b.optimize(objective, n_trials=6)
        self.assertEqual([t.params for t in a.trials], [t.params for t in b.trials])
        third = self.sampler("seed-c", seed=7, optimizer=settings)
        third.reseed_rng()
        c = optuna.create_study(sampler=third)
        c.optimize(objective, n_trials=1)
        self.assertNotEqual(c.trials[0].params, a.trials[0].params)


@unittest.skipIf(optuna is None, "optuna is not installed")
class ServerCheckTest(unittest.TestCase):
    def test_a_wrong_url_fails_at_once(self):
        from xbo.integration.optuna import XBOSampler

        started = time.monotonic()
        with self.assertRaisesRegex(xbo.XBOError, r"XBOSampler: the xbo server at http://127\.0\.0\.1:9 cannot be used"):
            XBOSampler(url="http://127.0.0.1:9")
        self.assertLess(time.monotonic() - started, 10)

    @needs_server
    def test_a_wrong_token_fails_at_once(self):
        from xbo.integration.optuna import XBOSampler

        kw = server_kwargs()
        if not kw["token"]:
            self.skipTest("the test server has no token")
        with self.assertRaises(xbo.XBOError) as cm:
            XBOSampler(url=kw["url"], token="not-" + kw["token"])
        self.assertEqual(cm.exception.status, 401)


if __name__ == "__main__":
    unittest.main()
