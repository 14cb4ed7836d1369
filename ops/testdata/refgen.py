"""Shared helpers for the gen_*.py scripts that write numpy reference cases.

Run each generator with Debian's numpy:  /usr/bin/python3 ops/testdata/gen_X.py
It writes ops/testdata/X.json, which is committed so tests need no Python.

A case is {"name", "op", "inputs": [arr...], "params": {...}, "expected": [arr...]}
and an arr is {"dtype", "shape", "data"} with data flattened in row-major order.
Floats that JSON cannot hold are the strings "nan", "inf", "-inf"; complex
numbers are [re, im]; bools are true/false.
"""
import json
import math
import os

import numpy as np

try:
    from ml_dtypes import bfloat16  # noqa: F401  (not in Debian; optional)
except ImportError:
    bfloat16 = None

HERE = os.path.dirname(os.path.abspath(__file__))


def _num(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def enc(a, dtype=None):
    """Encode an array. dtype overrides the name (for bfloat16 data that was
    computed in float32 and must be rounded by the reader)."""
    a = np.asarray(a)
    name = dtype or str(a.dtype)
    flat = a.reshape(-1)
    if a.dtype == np.bool_:
        data = [bool(v) for v in flat]
    elif np.issubdtype(a.dtype, np.integer):
        data = [int(v) for v in flat]
    elif np.issubdtype(a.dtype, np.complexfloating):
        data = [[_num(v.real), _num(v.imag)] for v in flat]
    else:
        data = [_num(v) for v in flat]
    return {"dtype": name, "shape": list(a.shape), "data": data}


def case(name, op, inputs, expected, **params):
    return {
        "name": name,
        "op": op,
        "inputs": [enc(x) if not isinstance(x, dict) else x for x in inputs],
        "params": params,
        "expected": [enc(x) if not isinstance(x, dict) else x for x in expected],
    }


def write(basename, cases):
    path = os.path.join(HERE, basename)
    with open(path, "w") as f:
        json.dump({"generator": "numpy " + np.__version__, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    print("wrote %d cases to %s" % (len(cases), path))
