"""Pruning: the study's pruner answers each report, should_prune() relays
it, and TrialPruned ends the trial as pruned."""

import unittest

import xbo

from support import needs_server, server_kwargs, unique

SPACE = [xbo.Float("x", 0.0, 1.0)]


@needs_server
class PruningTest(unittest.TestCase):
    def create(self, prefix, **kw):
        name = unique(prefix)
        study = xbo.create_study(name, SPACE, optimizer={"strategy": "random", "seed": 2}, **server_kwargs(), **kw)
        self.addCleanup(lambda: xbo.delete_study(name, **server_kwargs()))
        return study

    def test_median_pruner_stops_bad_trials(self):
        study = self.create("median", pruner={"type": "median", "n_startup_trials": 2})
        self.assertEqual(study.pruner["type"], "median")
        decisions = {}

        def objective(trial):
            bad = trial.number in (2, 4)
            for step in range(3):
                trial.report(5.0 if bad else 1.0 - 0.1 * step, step)
                decisions.setdefault(trial.number, []).append(trial.should_prune())
                if trial.should_prune():
                    raise xbo.TrialPruned()
            return 0.8

        study.optimize(objective, n_trials=5)
        trials = study.trials
        self.assertEqual([t.state for t in trials], ["complete", "complete", "pruned", "complete", "pruned"])
        # A bad trial is stopped at its first report, once two trials are
        # complete; the good ones are never told to stop.
        self.assertEqual(decisions, {0: [False] * 3, 1: [False] * 3, 2: [True], 3: [False] * 3, 4: [True]})
        self.assertEqual(trials[2].intermediate_values, {0: 5.0})
        self.assertEqual(trials[2].value, 5.0)

    def test_pruner_by_name(self):
        study = self.create("by-name", pruner="median")
        self.assertEqual(study.pruner["type"], "median")
        self.assertEqual(xbo.load_study(study.name, **server_kwargs()).pruner["type"], "median")

    def test_tell_pruned(self):
        study = self.create("tell-pruned")
        trial = study.ask()
        trial.report(0.7, 1)
        trial.report(0.6, 2)
        self.assertFalse(trial.should_prune())  # no pruner: never
        frozen = study.tell(trial, state="pruned")
        self.assertEqual((frozen.state, frozen.value, frozen.intermediate_values), ("pruned", 0.6, {1: 0.7, 2: 0.6}))
        self.assertEqual(study.get_trials(states=["pruned"])[0].number, trial.number)

    def test_unknown_pruner_is_refused(self):
        with self.assertRaises(xbo.XBOError) as cm:
            self.create("bad", pruner={"type": "median", "n_startup": 2})
        self.assertEqual(cm.exception.status, 400)
        self.assertIn("n_startup", cm.exception.message)
        with self.assertRaises(ValueError):
            self.create("bad", pruner=3)


if __name__ == "__main__":
    unittest.main()
