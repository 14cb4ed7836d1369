"""The workloads of bench_test.go, timed with numpy for side-by-side figures.

    /usr/bin/python3 bench/numpy_bench.py

Prints the median of repeated runs for each workload, with the same units as
the Go benchmarks (GB/s counted the same way, GFLOP/s for matmul). Debian's
numpy uses OpenBLAS when libopenblas0-pthread is installed.
"""
import statistics
import time

import numpy as np


def median_time(f, min_time=0.5, min_reps=5):
    f()
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < min_time:
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def report(name, t, nbytes=None, gflop=None):
    extra = ""
    if nbytes is not None:
        extra = "%8.2f GB/s" % (nbytes / t / 1e9)
    if gflop is not None:
        extra = "%8.2f GFLOP/s" % (gflop / t)
    print("%-28s %10.3f ms %s" % (name, t * 1e3, extra))


def main():
    rng = np.random.default_rng(0)
    for name, (r, c) in (("1M", (1024, 1024)), ("16M", (4096, 4096))):
        n = r * c
        x = rng.uniform(-1, 1, (r, c)).astype(np.float32)
        y = rng.uniform(-1, 1, (r, c)).astype(np.float32)
        row = rng.uniform(-1, 1, c).astype(np.float32)
        report("Add/contiguous/" + name, median_time(lambda: x + y), 12 * n)
        report("Add/row/" + name, median_time(lambda: x + row), 8 * n)
        flat = x.reshape(-1)
        report("Exp/" + name, median_time(lambda: np.exp(flat)), 8 * n)
        report("Sum/all/" + name, median_time(lambda: x.sum()), 4 * n)
        report("Sum/rows/" + name, median_time(lambda: x.sum(axis=1)), 4 * n)
        report("Sum/cols/" + name, median_time(lambda: x.sum(axis=0)), 4 * n)
    for n in (256, 512, 1024, 2048):
        for dt in (np.float32, np.float64):
            a = rng.uniform(-1, 1, (n, n)).astype(dt)
            b = rng.uniform(-1, 1, (n, n)).astype(dt)
            report("MatMul/%s/%d" % (np.dtype(dt).name, n), median_time(lambda: a @ b), gflop=2 * n**3 / 1e9)
    x = rng.uniform(-1, 1, (4096, 4096)).astype(np.float32)

    def softmax():
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    report("Softmax/rows/4096x4096", median_time(softmax), 8 * x.size)


if __name__ == "__main__":
    main()
