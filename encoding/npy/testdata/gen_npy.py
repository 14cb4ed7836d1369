#!/usr/bin/python3
"""Reference .npy and .npz files for encoding/npy, written by numpy.

    /usr/bin/python3 gen_npy.py            # (re)writes the files here
    /usr/bin/python3 gen_npy.py check DIR  # checks files fathom wrote in DIR

Run from this directory. The first form writes every file below and
expected.json, which lists each array's dtype, shape, order and values
(row-major; complex numbers as [re, im] pairs) so the Go tests need no
Python. The second form is how the Go test TestNumpyReadsFathomFiles
checks that numpy loads what fathom writes: DIR holds the files and a
manifest.json in the same form as expected.json.
"""
import json
import os
import sys

import numpy as np

# the integer dtypes fathom gained after the others: their values reach
# both ends of their range
NEW_INTS = ["int8", "int16", "uint16", "uint32", "uint64"]
# dtypes numpy and fathom share
SHARED = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64", "complex64"] + NEW_INTS
# numpy dtypes fathom has not yet: loading them is an error naming them
UNSUPPORTED = ["complex128"]


def values(dtype, shape):
    """Deterministic values, exact in every dtype, with negatives and fractions."""
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n)
    if dtype == "bool":
        v = (i % 3) == 1
    elif dtype in NEW_INTS:
        # the minimum and the maximum, then values spread over the range
        info = np.iinfo(dtype)
        lo, span = int(info.min), int(info.max) - int(info.min) + 1
        v = [lo, int(info.max)] + [lo + (k * 0x9E3779B97F4A7C15 + 12345) % span for k in range(n)]
        return np.array(v[:n], dtype=dtype).reshape(shape)
    elif dtype in ("uint8",):
        v = (i * 37 + 5) % 256
    elif dtype.startswith("int") or dtype.startswith("uint"):
        v = (i * 7919 - 40) * (1 if dtype.startswith("u") else (-1) ** i)
        if dtype.startswith("u"):
            v = np.abs(v)
        if dtype == "int64":
            v = v * 3_000_000_007  # beyond int32
    elif dtype.startswith("complex"):
        v = (i * 0.5 - 2) + 1j * (1.25 - i * 0.25)
    else:
        v = i * 0.75 - 3.5
    return np.asarray(v).astype(dtype).reshape(shape)


def flat(a):
    """Row-major values as JSON: bools, ints, floats, [re, im] pairs."""
    out = []
    for x in np.ascontiguousarray(a).reshape(-1):
        if a.dtype.kind == "b":
            out.append(bool(x))
        elif a.dtype.kind in "iu":
            out.append(int(x))
        elif a.dtype.kind == "c":
            out.append([float(x.real), float(x.imag)])
        else:
            out.append(float(x))
    return out


def entry(a, order="C"):
    return {"dtype": a.dtype.name, "shape": list(a.shape), "order": order, "values": flat(a)}


def generate():
    expected = {}

    def save(name, a, order="C", version=None):
        if version is None:
            np.save(name, a)
        else:
            with open(name, "wb") as f:
                np.lib.format.write_array(f, a, version=version)
        expected[name] = entry(a, order)

    for dt in SHARED:
        a = values(dt, (2, 3))
        save(dt + ".npy", a)
        # big-endian
        if np.dtype(dt).itemsize > 1:
            save(dt + "_be.npy", a.astype(np.dtype(dt).newbyteorder(">")))
        # Fortran order: numpy writes fortran_order True for F-contiguous arrays
        f = np.asfortranarray(values(dt, (3, 4, 2)))
        save(dt + "_fortran.npy", f, order="F")
    save("scalar_float64.npy", np.array(2.5))
    save("scalar_bool.npy", np.array(True))
    save("empty_float32.npy", np.zeros((0, 3), np.float32))
    save("empty_1d_int64.npy", np.zeros((0,), np.int64))
    save("vector_float32.npy", values("float32", (7,)))
    save("v2_float32.npy", values("float32", (2, 2)), version=(2, 0))
    save("v3_int32.npy", values("int32", (3,)), version=(3, 0))
    for dt in NEW_INTS:
        info = np.iinfo(dt)
        save("scalar_" + dt + ".npy", np.array(info.min if info.min < 0 else info.max, dt))
        save("empty_" + dt + ".npy", np.zeros((2, 0), dt))
    for dt in UNSUPPORTED:
        np.save("unsupported_" + dt + ".npy", values(dt, (2,)))
    np.save("unsupported_str.npy", np.array(["ab", "c"]))

    arrays = {
        "weights": values("float32", (4, 3)),
        "bias": values("float64", (3,)),
        "mask": values("bool", (2, 2)),
        "step": np.array(7, np.int64),
        "tokens": values("uint32", (2, 3)),
        "ids": values("uint64", (4,)),
        "quant": values("int8", (2, 4)),
        "pcm": values("int16", (5,)),
        "half_bits": values("uint16", (3,)),
    }
    np.savez("arrays.npz", **arrays)
    np.savez_compressed("arrays_compressed.npz", **arrays)
    expected["arrays.npz"] = {k: entry(v) for k, v in arrays.items()}
    expected["arrays_compressed.npz"] = expected["arrays.npz"]

    with open("expected.json", "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


def same(a, want, where):
    if a.dtype.name != want["dtype"] or list(a.shape) != want["shape"]:
        raise SystemExit("%s: dtype %s shape %s, want %s %s" % (where, a.dtype, a.shape, want["dtype"], want["shape"]))
    if want.get("order") == "F" and not (a.flags.f_contiguous and a.ndim > 1):
        raise SystemExit("%s: not in Fortran order" % where)
    got = flat(a)
    if got != want["values"]:
        raise SystemExit("%s: values %s, want %s" % (where, got, want["values"]))


def check(d):
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    for name, want in sorted(manifest.items()):
        path = os.path.join(d, name)
        if name.endswith(".npz"):
            with np.load(path) as z:
                if sorted(z.files) != sorted(want):
                    raise SystemExit("%s: members %s, want %s" % (name, sorted(z.files), sorted(want)))
                for k, w in want.items():
                    same(z[k], w, name + ":" + k)
        else:
            same(np.load(path), want, name)
    print("numpy loaded %d files" % len(manifest))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        check(sys.argv[2])
    else:
        generate()
