"""Python client of xbo, explainable Bayesian optimization as a service.

Standard library only. Optuna-shaped::

    import xbo

    study = xbo.create_study("svm", [
        xbo.Float("C", 1e-3, 1e3, log=True),
        xbo.Categorical("kernel", ["rbf", "poly"]),
        xbo.Int("degree", 2, 5, condition=("kernel", ["poly"])),
    ], load_if_exists=True)
    study.optimize(objective, n_trials=50, n_jobs=4)
    print(study.best_trial.params, study.url)

The server is ``xbo serve``; its URL and token come from the arguments, else
$XBO_URL and $XBO_TOKEN, else http://127.0.0.1:8080. See docs/python.md
in the xbo repository for the whole API.
"""

from ._http import DEFAULT_URL, XBOError
from .space import Categorical, Float, Int, Param
from .study import Study, create_study, delete_study, load_study
from .trial import FrozenTrial, Trial, TrialPruned

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_URL",
    "Categorical",
    "Float",
    "FrozenTrial",
    "Int",
    "Param",
    "Study",
    "Trial",
    "TrialPruned",
    "XBOError",
    "create_study",
    "delete_study",
    "load_study",
]
