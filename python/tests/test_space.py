"""The space builders: the JSON they produce and the mistakes they refuse."""

import unittest

import xbo
from xbo.space import space_document, typed_params


class SpaceTest(unittest.TestCase):
    def test_documents(self):
        doc = space_document(
            [
                xbo.Float("lr", 1e-4, 0.1, log=True, default=0.01),
                xbo.Int("layers", 1, 5),
                xbo.Categorical("opt", ["sgd", "adam"], default="adam"),
                xbo.Float("momentum", 0.1, 0.99, condition=("opt", ["sgd"])),
                xbo.Categorical("width", [16, 32, 64], condition=("layers", 3)),
                xbo.Categorical("bias", [True, False]),
            ],
            "maximize",
        )
        self.assertEqual(
            doc,
            {
                "objective": "maximize",
                "params": [
                    {"name": "lr", "type": "float", "low": 1e-4, "high": 0.1, "log": True, "default": 0.01},
                    {"name": "layers", "type": "int", "low": 1, "high": 5},
                    {"name": "opt", "type": "categorical", "choices": ["sgd", "adam"], "default": "adam"},
                    {"name": "momentum", "type": "float", "low": 0.1, "high": 0.99, "condition": {"parent": "opt", "values": ["sgd"]}},
                    {"name": "width", "type": "categorical", "choices": [16, 32, 64], "condition": {"parent": "layers", "values": [3]}},
                    {"name": "bias", "type": "categorical", "choices": [True, False]},
                ],
            },
        )

    def test_direction(self):
        params = [{"name": "x", "type": "float", "low": 0, "high": 1}]
        self.assertEqual(space_document([xbo.Float("x", 0, 1)], None)["objective"], "minimize")
        self.assertEqual(space_document({"objective": "maximize", "params": params}, None)["objective"], "maximize")
        self.assertEqual(space_document({"params": params}, "maximize")["objective"], "maximize")
        with self.assertRaisesRegex(ValueError, "disagrees"):
            space_document({"objective": "maximize", "params": params}, "minimize")
        with self.assertRaisesRegex(ValueError, "direction"):
            space_document(params, "up")

    def test_refused(self):
        cases = [
            (lambda: xbo.Float("x", 1, 1), "below high"),
            (lambda: xbo.Float("x", 0, 1, log=True), "log scale needs low > 0"),
            (lambda: xbo.Float("x", 0, float("inf")), "finite"),
            (lambda: xbo.Float("x", 0, 1, default=2), "default 2"),
            (lambda: xbo.Int("n", 0.5, 3), "integer"),
            (lambda: xbo.Int("n", 1, 3, default=True), "integer"),
            (lambda: xbo.Categorical("c", []), "empty"),
            (lambda: xbo.Categorical("c", "abc"), "must be a list"),
            (lambda: xbo.Categorical("c", ["a", "a"]), "twice"),
            (lambda: xbo.Categorical("c", [None]), "not a string"),
            (lambda: xbo.Categorical("c", ["a"], default="b"), "not one of the choices"),
            (lambda: xbo.Categorical("c", [1, 2], default=True), "not one of the choices"),
            (lambda: xbo.Float("x", 0, 1, condition="opt"), "pair"),
            (lambda: xbo.Float("x", 0, 1, condition=("x", [1])), "itself"),
            (lambda: xbo.Float("", 0, 1), "non-empty"),
            (lambda: space_document([xbo.Float("x", 0, 1), xbo.Int("x", 0, 1)], None), "declared twice"),
            (lambda: space_document([], None), "no parameters"),
            (lambda: space_document({"params": []}, None), "params"),
        ]
        for make, message in cases:
            with self.assertRaisesRegex(ValueError, message):
                make()
        with self.assertRaises(TypeError):
            space_document(["x"], None)

    def test_booleans_and_numbers_are_distinct_choices(self):
        # 1 == True in Python, but JSON (and the server) tell them apart.
        c = xbo.Categorical("c", [1, True])
        self.assertEqual(c.to_dict()["choices"], [1, True])

    def test_typed_params(self):
        types = {"x": "float", "n": "int", "c": "categorical"}
        got = typed_params({"x": 1, "n": 3.0, "c": 16}, types)
        self.assertEqual(got, {"x": 1.0, "n": 3, "c": 16})
        self.assertIs(type(got["x"]), float)
        self.assertIs(type(got["n"]), int)
        self.assertIs(type(got["c"]), int)


if __name__ == "__main__":
    unittest.main()
