"""numpy's singular values for the SVD divide-and-conquer tests (lapack_bdc_test.go).

Run with Debian's numpy:  /usr/bin/python3 backend/cpu/testdata/gen_svd_dc.py
It writes svd_dc.json: {"numpy": version, "cases": [{"name", "kind", "m", "n",
"s"}]}, where kind names a formula for the m×n matrix that the Go test builds
the same way (svdRefMatrix), and s is numpy.linalg.svd's singular values,
descending.
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def householder(a, v, left):
    # (I - 2·v·vᵀ/(vᵀv))·a from the left, or a·(I - 2·v·vᵀ/(vᵀv)) from the
    # right, in the Go test's order of operations
    s = 2.0 / np.dot(v, v)
    if left:
        return a - s * np.outer(v, v @ a)
    return a - s * np.outer(a @ v, v)


def spectrum(kind, k):
    i = np.arange(k, dtype=np.float64)
    if kind == "graded":
        # 1 down to 1e-12
        return 10.0 ** (-12.0 * i / (k - 1))
    if kind == "clustered":
        # within 1e-12·k of 1 and of 2
        return 1.0 + (np.arange(k) % 2) + 1e-12 * i
    if kind == "repeated":
        # 3, 2 and 1, each a third of the time
        return np.array([3.0, 2.0, 1.0])[(np.arange(k) * 3) // k]
    if kind == "rankdef":
        # half of them zero
        return np.where(np.arange(k) < k // 2, 1.0 + i / k, 0.0)
    raise ValueError(kind)


def matrix(kind, m, n):
    i, j = np.meshgrid(np.arange(m, dtype=np.float64), np.arange(n, dtype=np.float64), indexing="ij")
    if kind == "wave":
        return np.sin(0.37 * (i + 1.0) * (j + 2.0) + i)
    if kind == "tiny":
        return 1e-300 * np.sin(0.37 * (i + 1.0) * (j + 2.0) + i)
    if kind == "rowgraded":
        # rows from 1 down to 1e-10
        return np.sin(0.37 * (i + 1.0) * (j + 2.0) + i) * 10.0 ** (-10.0 * i / (m - 1))
    if kind == "glued":
        # the upper bidiagonal of ones, cut every 40 rows by a zero and
        # every 40 rows between by 1e-15
        a = np.eye(m, n)
        for r in range(min(m, n - 1)):
            a[r, r + 1] = {39: 0.0, 19: 1e-15}.get(r % 40, 1.0)
        return a
    k = min(m, n)
    a = np.zeros((m, n))
    a[np.arange(k), np.arange(k)] = spectrum(kind, k)
    for p in range(3):
        a = householder(a, np.sin(np.arange(m, dtype=np.float64) * (p + 1.0) + 1.0), True)
        a = householder(a, np.cos(np.arange(n, dtype=np.float64) * (p + 2.0) + 0.5), False)
    return a


CASES = [
    ("wave", 100, 100), ("wave", 150, 90), ("wave", 90, 150), ("wave", 65, 200),
    ("graded", 120, 120), ("graded", 140, 100),
    ("clustered", 110, 110), ("clustered", 100, 130),
    ("repeated", 99, 99), ("repeated", 130, 96),
    ("rankdef", 100, 100), ("rankdef", 90, 128), ("rankdef", 128, 90),
    ("glued", 130, 130), ("glued", 70, 120),
    ("tiny", 80, 80), ("rowgraded", 100, 100),
]


def main():
    cases = []
    for kind, m, n in CASES:
        s = np.linalg.svd(matrix(kind, m, n), compute_uv=False)
        cases.append({"name": "%s %dx%d" % (kind, m, n), "kind": kind, "m": m, "n": n, "s": [float(x) for x in s]})
    with open(os.path.join(HERE, "svd_dc.json"), "w") as f:
        json.dump({"numpy": np.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
