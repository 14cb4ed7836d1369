"""numpy's layer norm of rows with a large mean, for the row runner's
precision test (fused_rows_test.go, TestFusedRowsLayerNormLargeMean).

Run with Debian's numpy:  /usr/bin/python3 backend/cpu/testdata/gen_rows_precision.py
It writes rows_precision.json: {"rows", "cols", "eps", "x", "w", "b", "y"},
where x (rows x cols, row-major) is 1e4 plus standard normal noise rounded
to float32, w and b are float32 vectors, and y is
(x - mean)/sqrt(var + eps)*w + b over each row, computed in float64 from
those float32 values. A one-pass variance, E[x^2] - E[x]^2, loses all of
var (about 1) against E[x^2] (about 1e8) in float32.
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rows, cols, eps = 6, 1000, 1e-5
    rng = np.random.default_rng(22)
    x = (1e4 + rng.standard_normal((rows, cols))).astype(np.float32)
    w = rng.uniform(0.5, 1.5, cols).astype(np.float32)
    b = rng.uniform(-1, 1, cols).astype(np.float32)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    var = x64.var(axis=-1, keepdims=True)
    y = (x64 - mean) / np.sqrt(var + eps) * w.astype(np.float64) + b.astype(np.float64)
    out = {
        "rows": rows,
        "cols": cols,
        "eps": eps,
        "x": [float(v) for v in x.ravel()],
        "w": [float(v) for v in w],
        "b": [float(v) for v in b],
        "y": [float(v) for v in y.ravel()],
    }
    with open(os.path.join(HERE, "rows_precision.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
