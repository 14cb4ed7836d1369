"""numpy references for package fft.

Run with Debian's numpy:  /usr/bin/python3 fft/testdata/gen_fft.py
It writes fft/testdata/fft.json (format: ops/testdata/refgen.py). numpy
computes in complex128; fathom in complex64, compared with tolerances.
A param that is absent is numpy's None (fathom's 0 or nil).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "ops", "testdata"))
import refgen  # noqa: E402

refgen.HERE = os.path.dirname(os.path.abspath(__file__))
_num64 = refgen._num


def _num32(v):
    """A float32 value in its shortest decimal form (less than half the
    file), other values in full."""
    if np.isfinite(v) and float(np.float32(v)) == float(v):
        return float(str(np.float32(v)))
    return _num64(v)


refgen._num = _num32
rng = np.random.default_rng(21)


def rand(shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


FUNCS = {
    "FFT": np.fft.fft, "IFFT": np.fft.ifft, "RFFT": np.fft.rfft, "IRFFT": np.fft.irfft,
    "FFT2": np.fft.fft2, "IFFT2": np.fft.ifft2, "RFFT2": np.fft.rfft2, "IRFFT2": np.fft.irfft2,
    "FFTN": np.fft.fftn, "IFFTN": np.fft.ifftn, "RFFTN": np.fft.rfftn, "IRFFTN": np.fft.irfftn,
}
ONE_AXIS = {"FFT", "IFFT", "RFFT", "IRFFT"}
cases = []


def add(op, x, **params):
    kw = dict(params)
    out = FUNCS[op](x, **kw)
    # rounded to fathom's dtypes: the tests' tolerances are float32's
    out = out.astype(np.complex64 if out.dtype.kind == "c" else np.float32)
    name = "%s %s %s %s" % (op, x.dtype, list(x.shape), " ".join("%s=%s" % kv for kv in sorted(params.items())))
    cases.append(refgen.case(name.strip(), op, [x], [out], **params))


# every length 1..64, primes, powers of 2, 3, 5, 7 and a few large sizes
lengths = list(range(1, 65)) + [67, 97, 101, 127, 128, 243, 256, 343, 625, 1000, 1009, 2401, 4096, 4099]
for n in lengths:
    add("FFT", rand((n,), np.complex64))
    add("IFFT", rand((n,), np.complex64))
    add("RFFT", rand((n,), np.float32))
    if n >= 2:
        add("IRFFT", rand((n // 2 + 1,), np.complex64), n=n)

# dtypes, n crop and pad, axes, norms, batch shapes
for dt in (np.float32, np.float64, np.complex64):
    add("FFT", rand((3, 10), dt))
    add("IFFT", rand((10, 3), dt), axis=0)
for norm in ("backward", "ortho", "forward"):
    for op in ("FFT", "IFFT", "RFFT"):
        add(op, rand((2, 12), np.float32), norm=norm)
    add("IRFFT", rand((2, 7), np.complex64), norm=norm)
    add("IRFFT", rand((2, 7), np.complex64), n=13, norm=norm)
    for op in ("FFT2", "IFFT2", "RFFT2", "IRFFT2", "FFTN", "IFFTN", "RFFTN", "IRFFTN"):
        x = rand((3, 4, 6), np.float32 if op.startswith("R") else np.complex64)
        add(op, x, norm=norm)
for op in ("FFT", "IFFT", "RFFT"):
    add(op, rand((4, 9), np.float32), n=5)
    add(op, rand((4, 9), np.float32), n=16)
    add(op, rand((9, 4), np.float32), n=12, axis=0)
    add(op, rand((2, 3, 5), np.float32), axis=1)
add("IRFFT", rand((4, 9), np.complex64))
add("IRFFT", rand((4, 9), np.complex64), n=6)
add("IRFFT", rand((4, 9), np.complex64), n=30)
add("IRFFT", rand((9, 4), np.complex64), n=7, axis=0)
add("RFFT", rand((3, 8), np.float64))
add("IRFFT", rand((3, 5), np.float32))
for op in ("FFT2", "IFFT2", "RFFT2", "IRFFT2"):
    x = rand((2, 5, 6), np.float32 if op.startswith("R") else np.complex64)
    add(op, x)
    add(op, x, axes=[0, 2])
    add(op, x, axes=[2, 0])
    add(op, x, s=[4, 8])
    add(op, x, s=[7, 3], axes=[0, 1])
for op in ("FFTN", "IFFTN", "RFFTN", "IRFFTN"):
    x = rand((2, 5, 6, 3), np.float32 if op.startswith("R") else np.complex64)
    add(op, x)
    add(op, x, axes=[1, 3])
    add(op, x, axes=[3, 0, 1])
    add(op, x, s=[4, 4])
    add(op, x, s=[3, 8, 2], axes=[0, 2, 1])
    add(op, rand((0, 4), np.float32 if op.startswith("R") else np.complex64), axes=[1])
add("FFT2", rand((3, 64, 60), np.complex64))
add("RFFTN", rand((8, 30, 14), np.float32))

for n, d in ((1, 1.0), (8, 1.0), (9, 0.5), (10, 0.1)):
    cases.append(refgen.case("FFTFreq n=%d d=%g" % (n, d), "FFTFreq", [], [np.fft.fftfreq(n, d).astype(np.float32)], n=n, d=d))
    cases.append(refgen.case("RFFTFreq n=%d d=%g" % (n, d), "RFFTFreq", [], [np.fft.rfftfreq(n, d).astype(np.float32)], n=n, d=d))
for shape, axes in (((7,), None), ((8,), None), ((4, 5), None), ((4, 5), [1]), ((3, 4, 5), [0, 2]), ((3, 4, 5), [-1])):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    p = {} if axes is None else {"axes": axes}
    cases.append(refgen.case("FFTShift %s %s" % (list(shape), axes), "FFTShift", [x], [np.fft.fftshift(x, axes)], **p))
    cases.append(refgen.case("IFFTShift %s %s" % (list(shape), axes), "IFFTShift", [x], [np.fft.ifftshift(x, axes)], **p))

refgen.write("fft.json", cases)
