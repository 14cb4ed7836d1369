"""numpy's eigenvalues for the Eigh divide-and-conquer tests (lapack_dc_test.go).

Run with Debian's numpy:  /usr/bin/python3 backend/cpu/testdata/gen_eigh_dc.py
It writes eigh_dc.json: a list of {"name", "kind", "n", "w"}, where kind names
a formula for the n×n symmetric matrix that the Go test builds the same way
(dcRefMatrix), and w is numpy.linalg.eigh's eigenvalues, ascending.
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def matrix(kind, n):
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    hi, lo = np.maximum(i, j), np.minimum(i, j)
    wave = np.sin(3.0 * hi + 7.0 * lo) / (1.0 + hi - lo)
    if kind == "wave":
        return wave
    if kind == "clustered":
        # eigenvalues within 1e-8 of 2
        return 2.0 * np.eye(n) + 1e-8 * wave
    if kind == "toeplitz":
        return 2.0 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    if kind == "repeated":
        # 8×8 Hilbert-like blocks repeated down the diagonal: each
        # eigenvalue n/8 times
        b = 1.0 / (1.0 + np.add.outer(np.arange(8), np.arange(8)))
        return np.kron(np.eye(n // 8), b)
    raise ValueError(kind)


def main():
    cases = []
    for kind, n in [("wave", 100), ("clustered", 150), ("toeplitz", 128), ("repeated", 96)]:
        w = np.linalg.eigh(matrix(kind, n))[0]
        cases.append({"name": "%s %d" % (kind, n), "kind": kind, "n": n, "w": [float(x) for x in w]})
    with open(os.path.join(HERE, "eigh_dc.json"), "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
