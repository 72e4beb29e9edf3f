"""Arguments are checked before any request is sent."""

import unittest

import xbo
from xbo._http import Connection

from support import ScriptedServer

RAW = {"name": "s", "direction": "minimize", "space": {"objective": "minimize", "params": [{"name": "x", "type": "float", "low": 0, "high": 1}]}}


class ValidationTest(unittest.TestCase):
    def setUp(self):
        self.server = ScriptedServer(lambda m, p, b: (500, {"error": "no request was expected"}))
        self.addCleanup(self.server.close)
        self.study = xbo.Study(Connection(self.server.url, retries=0), RAW)

    def test_optimize_arguments(self):
        f = lambda t: 0.0  # noqa: E731
        for kwargs, error in [
            ({"n_trials": -1}, ValueError),
            ({"n_trials": 2.5}, ValueError),
            ({"timeout": -1}, ValueError),
            ({"n_jobs": 0}, ValueError),
            ({"n_jobs": True}, ValueError),
            ({"callbacks": [3]}, TypeError),
            ({"catch": [ValueError, 1]}, TypeError),
        ]:
            with self.assertRaises(error, msg=kwargs):
                self.study.optimize(f, **kwargs)
        with self.assertRaises(TypeError):
            self.study.optimize("objective", n_trials=1)
        self.study.optimize(f, n_trials=0)  # nothing to do, nothing sent

    def test_tell_and_study_arguments(self):
        for call in [
            lambda: self.study.tell(-1, 1.0),
            lambda: self.study.tell("3", 1.0),
            lambda: self.study.tell(3, 1.0, state="done"),
            lambda: self.study.tell(3, 1.0, state="failed"),
            lambda: self.study.tell(3, None, state="pruned", reason="x"),
            lambda: self.study.tell(3, float("inf"), state="pruned"),
            lambda: self.study.tell(3, 1.0, user_attrs={"k": object()}),
            lambda: self.study.enqueue_trial([("x", 0.5)]),
            lambda: self.study.add_trial({"x": 0.5}, "0.3"),
            lambda: self.study.get_trials(states=["done"]),
            lambda: xbo.create_study("", [xbo.Float("x", 0, 1)], url=self.server.url),
            lambda: xbo.create_study("s", [xbo.Float("x", 0, 1)], url=self.server.url, worker="w" * 201),
            lambda: xbo.create_study("s", [xbo.Float("x", 0, 1)], url=self.server.url, optimizer="ei"),
            lambda: xbo.create_study("s", [xbo.Float("x", 0, 1)], url=self.server.url, pruner=5),
            lambda: xbo.load_study("s", url=self.server.url, wait=-1),
        ]:
            with self.assertRaises(ValueError):
                call()
        self.assertEqual(self.server.requests, [])


if __name__ == "__main__":
    unittest.main()
