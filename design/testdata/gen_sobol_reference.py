#!/usr/bin/python3
"""Write sobol_reference.txt: the first points of the unscrambled Sobol sequence
as computed by Debian's python3-scipy, for design's TestSobolMatchesScipy.

Every coordinate is k/2^30 for an integer k, so printing k keeps the file exact.
Format: a line "# d=D n=N skip=K" starts a case (points K..K+N-1), then N lines
of D integers k.

Run: apt-get install -y python3-scipy && /usr/bin/python3 gen_sobol_reference.py
"""
import os
import warnings

import numpy as np
import scipy
from scipy.stats import qmc

# (d, n, skip): skip > 0 starts at point index skip (scipy's fast_forward), which
# exercises direction numbers far beyond the initial m_1..m_s of every dimension.
CASES = [(1, 64, 0), (2, 64, 0), (10, 256, 0), (63, 64, 0), (64, 128, 0), (65, 32, 0),
         (64, 16, 1000003), (1024, 8, 123456789)]
SCALE = 2.0 ** 30

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "sobol_reference.txt"), "w") as f:
    f.write("# scipy %s qmc.Sobol(d, scramble=False).random(n), coordinates times 2^30\n" % scipy.__version__)
    for d, n, skip in CASES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy warns about the unscrambled zero point
            engine = qmc.Sobol(d, scramble=False)
            if skip > 0:  # fast_forward(0) underflows in scipy 1.10
                engine.fast_forward(skip)
            pts = engine.random(n)
        k = pts * SCALE
        assert np.all(k == np.round(k)), "coordinate is not a multiple of 2^-30"
        f.write("# d=%d n=%d skip=%d\n" % (d, n, skip))
        for row in k.astype(np.int64):
            f.write(" ".join(map(str, row)) + "\n")
