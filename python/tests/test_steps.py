"""Stepped ranges: the space entries, the checks before any request, and a
study whose every proposal lies on the grid."""

import unittest

import xbo
from xbo.space import space_document

from support import needs_server, server_kwargs, unique


class StepDocumentTest(unittest.TestCase):
    def test_entries(self):
        doc = space_document([xbo.Float("x", -10, 10, step=0.5), xbo.Int("k", 3, 9, step=2), xbo.Int("n", 1, 9, log=True, step=1)], None)
        self.assertEqual(
            doc["params"],
            [
                {"name": "x", "type": "float", "low": -10, "high": 10, "step": 0.5},
                {"name": "k", "type": "int", "low": 3, "high": 9, "step": 2},
                {"name": "n", "type": "int", "low": 1, "high": 9, "log": True},
            ],
        )

    def test_refused(self):
        cases = [
            (lambda: xbo.Float("x", 0, 1, step=0.3), r"'x': \(high - low\) / step"),
            (lambda: xbo.Int("k", 3, 10, step=2), r"'k': \(high - low\) / step"),
            (lambda: xbo.Int("k", 3, 9, step=1.5), "step must be an integer"),
            (lambda: xbo.Float("x", 1, 10, log=True, step=1.0), "cannot be combined with log"),
            (lambda: xbo.Float("x", 0, 1, step=0), "positive"),
            (lambda: xbo.Float("x", 0, 1, step=float("nan")), "positive"),
        ]
        for make, message in cases:
            with self.assertRaisesRegex(ValueError, message):
                make()
        # 0.1 does not divide 1 exactly in binary; the tolerance accepts it.
        self.assertEqual(xbo.Float("r", 0, 1, step=0.1).step, 0.1)


@needs_server
class StepStudyTest(unittest.TestCase):
    def test_proposals_lie_on_the_grid(self):
        name = unique("steps")
        study = xbo.create_study(name, [xbo.Float("x", -10, 10, step=0.5), xbo.Int("k", 3, 9, step=2)],
                                 optimizer={"seed": 3}, **server_kwargs())
        self.addCleanup(lambda: xbo.delete_study(name, **server_kwargs()))
        study.optimize(lambda t: (t.params["x"] - 1.3) ** 2 + (t.params["k"] - 6) ** 2, n_trials=24)
        ks = set()
        for t in study.trials:
            x, k = t.params["x"], t.params["k"]
            self.assertIsInstance(k, int)
            self.assertEqual(x * 2, int(x * 2), "trial %d: x = %r is off the step-0.5 grid" % (t.number, x))
            self.assertTrue(-10 <= x <= 10)
            self.assertIn(k, (3, 5, 7, 9), "trial %d" % t.number)
            ks.add(k)
        self.assertEqual(study.space["params"][0]["step"], 0.5)
        # A value told off the grid is refused by the server, naming the parameter.
        with self.assertRaisesRegex(xbo.XBOError, '"x".*not on its grid'):
            study.add_trial({"x": 0.25, "k": 5}, 1.0)
        study.add_trial({"x": 0.5, "k": 5}, 1.0)


if __name__ == "__main__":
    unittest.main()
