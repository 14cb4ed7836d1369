"""numpy's np.result_type for every pair of fathom's dtypes that numpy has
(all but bfloat16), for TestPromoteMatchesNumpy in array/dtype_test.go.

Run with /usr/bin/python3 from this directory; it rewrites promote.json:
{"numpy": "<version>", "result": {"<a>": {"<b>": "<np.result_type(a, b)>"}}}.
"""
import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64"]


def main():
    result = {a: {b: str(np.result_type(np.dtype(a), np.dtype(b))) for b in DTYPES} for a in DTYPES}
    with open(HERE / "promote.json", "w") as f:
        json.dump({"numpy": np.__version__, "result": result}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
