"""numpy's str layout of arrays whose elements are formatted by a printf
verb, for TestFormatMatchesNumpyStr in array/format_test.go.

fathom's element verbs (fmt.Sprintf("%.2f", a) and the like) format each
element as fmt formats one number, pad the elements to a common width and
lay them out as numpy's str does: nested brackets, elements separated by
spaces, lines wrapped at 75 columns, arrays of more than 1000 elements
summarised with "...". This script asks numpy for that layout, with
array2string and a formatter that applies the same printf format (Python's
% agrees with Go's fmt for the verbs used here) and the same padding.

Run with /usr/bin/python3 from this directory; it rewrites format.json:
{"numpy": "<version>", "cases": [{"name", "dtype", "shape", "data",
"format", "want"}...]}, data in row-major order (float64 values exact in
the case's dtype).
"""
import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent

THRESHOLD, EDGE = 1000, 3


def shown(a):
    """The elements numpy shows, which the padding is computed over."""
    if a.size <= THRESHOLD:
        return a.ravel()
    for ax in range(a.ndim):
        if a.shape[ax] > 2 * EDGE:
            idx = list(range(EDGE)) + list(range(a.shape[ax] - EDGE, a.shape[ax]))
            a = np.take(a, idx, axis=ax)
    return a.ravel()


def layout(a, fmt):
    texts = [fmt % v for v in shown(a).tolist()]
    width = max((len(t) for t in texts), default=0)
    left = "-" in fmt.split(".")[0]

    def one(v):
        t = fmt % v
        return t.ljust(width) if left else t.rjust(width)

    return np.array2string(a, separator=" ", formatter={"all": one},
                           threshold=THRESHOLD, edgeitems=EDGE, max_line_width=75)


def case(name, a, fmt):
    return {"name": name, "dtype": str(a.dtype), "shape": list(a.shape),
            "data": [float(v) for v in a.ravel().tolist()], "format": fmt,
            "want": layout(a, fmt)}


def main():
    rng = np.random.default_rng(19)
    m = np.array([[1, 2.5, -3], [4, 0.001, 6]])
    cases = [
        case("2x3 %.2f", m, "%.2f"),
        case("2x3 %8.3f", m, "%8.3f"),
        case("2x3 %-8.2f", m, "%-8.2f"),
        case("2x3 %+.1e", m, "%+.1e"),
        case("2x3 %e", m.astype(np.float32), "%e"),
        case("2x3 %010.3f", m, "%010.3f"),
        case("2x3 %.3g", m * 1234.5, "%.3g"),
        case("0-d %.3f", np.array(3.14159), "%.3f"),
        case("empty %.1f", np.zeros((2, 0)), "%.1f"),
        case("1-d wraps", np.round(rng.normal(size=40) * 100, 3), "%.3f"),
        case("3-d", np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 8, "%.3f"),
        case("2x1000 summarised", (np.arange(2000) % 10).reshape(2, 1000).astype(np.float32), "%.1f"),
        case("summarised 3-d", (np.arange(2 * 30 * 30) % 7).reshape(2, 30, 30).astype(np.float64), "%.2f"),
        case("int32 %d", np.array([1, -20, 300], dtype=np.int32), "%d"),
        case("int32 %5d", np.array([[1, -20], [300, 4]], dtype=np.int32), "%5d"),
        case("int64 %x", np.array([1, -20, 300], dtype=np.int64), "%x"),
        case("uint8 %.1f", np.array([0, 7, 255], dtype=np.uint8), "%.1f"),
        case("int32 wraps", np.arange(-30, 30, dtype=np.int32), "%6d"),
    ]
    out = {"numpy": np.__version__, "cases": cases}
    (HERE / "format.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to format.json")


main()
