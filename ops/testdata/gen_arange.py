"""numpy reference cases for Arange into integer dtypes with fractional
arguments (ops/create.go): numpy takes the length from the float arguments,
converts the first two elements and repeats their difference.

Run:  /usr/bin/python3 ops/testdata/gen_arange.py   (writes arange.json)
"""
import numpy as np

from refgen import case, write

ARANGES = [
    (0, 3, 0.2, "int32"),      # fifteen zeros: int(0.2) - int(0) = 0
    (0.5, 3, 0.7, "int32"),
    (-1.5, 3, 0.6, "int32"),   # int() truncates toward zero: -1, then int(-0.9) = 0
    (1.7, 10, 1.5, "int64"),
    (3, 0, -0.5, "int32"),
    (0.9, 5, 1.1, "uint8"),
    (-2.5, 2, 1.25, "int16"),
    (0.25, 4, 0.5, "int8"),
    (5.9, -2, -2.2, "int64"),
    (0, 2, 0.5, "uint32"),
    (1, 7, 1.5, "uint16"),
    (0, 4, 1, "int32"),        # whole arguments: the ordinary sequence
]


def main():
    cases = []
    for start, stop, step, d in ARANGES:
        ref = np.arange(start, stop, step, dtype=np.dtype(d))
        cases.append(case(f"Arange/{d}/{start}:{stop}:{step}", "Arange", [], [ref],
                          start=start, stop=stop, step=step))
    write("arange.json", cases)


main()
