"""numpy reference cases for the decompositions: writes linalg_l1.json.

Run with Debian's numpy: /usr/bin/python3 ops/testdata/gen_linalg_l1.py

Cholesky (both triangles), CholeskyInv, QR (reduced and complete), SVD
(full, thin, values), Eigh and Eigvalsh (both triangles) and Eig and
Eigvals, in float32 and float64, on batches (empty ones too), 1x1 and
non-square matrices where allowed, ill-conditioned matrices and repeated
eigenvalues. fathom computes float32 in float64 and rounds once, so the
float32 cases' expected values are numpy's float64 results on the float32
inputs, rounded. Signs and orders of vectors are not unique: the Go test
compares them up to a sign (a phase for Eig) and checks reconstruction
and orthogonality besides.

A case whose params hold "error" expects Eval to fail with that kind
(not_pd, no_convergence, not_finite, singular); "nan" cases feed NaN.
"""
import numpy as np

from refgen import case, write

rng = np.random.default_rng(2121)


def spd(n, batch=()):
    x = rng.standard_normal(batch + (n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def sym(n, batch=()):
    x = rng.standard_normal(batch + (n, n))
    return (x + np.swapaxes(x, -1, -2)) / 2


def hilbert(n):
    i = np.arange(n)
    return 1.0 / (i[:, None] + i[None, :] + 1)


def with_other_triangle(a, upper, v=7.5):
    """a with the triangle that is not read overwritten, so a routine that
    reads it is caught."""
    a = a.copy()
    n = a.shape[-1]
    mask = np.tril(np.ones((n, n), bool), -1) if upper else np.triu(np.ones((n, n), bool), 1)
    a[..., mask] = v
    return a


def as_dt(x, dt):
    return np.asarray(x).astype(dt)


def f64(x):
    return np.asarray(x).astype(np.float64)


def main():
    cases = []
    dts = ["float32", "float64"]

    # Cholesky
    for dt in dts:
        for n, batch in [(1, ()), (4, ()), (3, (2,)), (3, (0,)), (0, (2,))]:
            a = as_dt(spd(n, batch), dt)
            for upper in [False, True]:
                inp = with_other_triangle(a, upper)
                want = np.linalg.cholesky(f64(a))
                if upper:
                    want = np.swapaxes(want, -1, -2)
                cases.append(case("Cholesky %s %s n=%d upper=%s" % (dt, batch, n, upper), "Cholesky",
                                  [inp], [as_dt(want, dt)], upper=upper))
    h = hilbert(7)
    cases.append(case("Cholesky Hilbert 7", "Cholesky", [h], [np.linalg.cholesky(h)], upper=False))
    cases.append(case("Cholesky not positive definite", "Cholesky", [np.array([[1.0, 2.0], [2.0, 1.0]])], [],
                      upper=False, error="not_pd"))
    bad = spd(3, (3,))
    bad[1] = -np.eye(3)
    cases.append(case("Cholesky not positive definite in a batch", "Cholesky", [bad], [], upper=False,
                      error="not_pd", index=[1]))
    cases.append(case("Cholesky singular", "Cholesky", [np.ones((3, 3))], [], upper=True, error="not_pd"))
    nan_in = spd(3)
    nan_in[1, 0] = nan_in[0, 1] = np.nan
    cases.append(case("Cholesky NaN", "Cholesky", [nan_in], [np.tril(np.full((3, 3), np.nan))], upper=False,
                      nan=True))
    # a NaN outside the triangle read changes nothing (numpy reads the lower)
    nan_out = spd(3)
    want = np.linalg.cholesky(nan_out)
    nan_out[0, 2] = np.nan
    cases.append(case("Cholesky NaN in the other triangle", "Cholesky", [nan_out], [want], upper=False))

    # CholeskyInv
    for dt in dts:
        for n, batch in [(1, ()), (4, ()), (3, (2,)), (3, (0,))]:
            a = spd(n, batch)
            l = np.linalg.cholesky(a)
            for upper in [False, True]:
                f = np.swapaxes(l, -1, -2) if upper else l
                f = as_dt(f, dt)
                inp = with_other_triangle(f, upper)
                ff = f64(f)
                want = np.linalg.inv(np.swapaxes(ff, -1, -2) @ ff if upper else ff @ np.swapaxes(ff, -1, -2))
                cases.append(case("CholeskyInv %s %s n=%d upper=%s" % (dt, batch, n, upper), "CholeskyInv",
                                  [inp], [as_dt(want, dt)], upper=upper))
    cases.append(case("CholeskyInv singular", "CholeskyInv", [np.array([[1.0, 0.0], [3.0, 0.0]])], [],
                      upper=False, error="singular"))

    # QR
    for dt in dts:
        for shape in [(1, 1), (4, 3), (3, 5), (4, 4), (2, 3, 3), (2, 5, 2), (0, 3, 2), (3, 0), (0, 3)]:
            a = as_dt(rng.standard_normal(shape), dt)
            for mode in ["reduced", "complete"]:
                q, r = np.linalg.qr(f64(a), mode=mode)
                cases.append(case("QR %s %s %s" % (dt, shape, mode), "QR", [a], [as_dt(q, dt), as_dt(r, dt)],
                                  complete=(mode == "complete")))
    # rank deficient: the factorisation exists, r has a zero on its diagonal
    rd = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 4))
    q, r = np.linalg.qr(rd)
    cases.append(case("QR rank deficient", "QR", [rd], [q, r], complete=False))
    q, r = np.linalg.qr(hilbert(6))
    cases.append(case("QR Hilbert 6", "QR", [hilbert(6)], [q, r], complete=False))
    nan_in = rng.standard_normal((3, 2))
    nan_in[1, 1] = np.nan
    cases.append(case("QR NaN", "QR", [nan_in], [np.full((3, 2), np.nan), np.triu(np.full((2, 2), np.nan))],
                      complete=False, nan=True))

    # SVD
    for dt in dts:
        for shape in [(1, 1), (4, 3), (3, 5), (4, 4), (2, 3, 3), (2, 5, 2), (0, 3, 2), (3, 0), (2, 0, 3)]:
            a = as_dt(rng.standard_normal(shape), dt)
            for full in [True, False]:
                u, s, vt = np.linalg.svd(f64(a), full_matrices=full)
                cases.append(case("SVD %s %s full=%s" % (dt, shape, full), "SVD", [a],
                                  [as_dt(u, dt), as_dt(s, dt), as_dt(vt, dt)], full=full))
            cases.append(case("SVDVals %s %s" % (dt, shape), "SVDVals", [a],
                              [as_dt(np.linalg.svd(f64(a), compute_uv=False), dt)]))
    rd = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 4))
    cases.append(case("SVDVals rank deficient", "SVDVals", [rd], [np.linalg.svd(rd, compute_uv=False)]))
    cases.append(case("SVDVals Hilbert 8", "SVDVals", [hilbert(8)], [np.linalg.svd(hilbert(8), compute_uv=False)]))
    u, s, vt = np.linalg.svd(hilbert(5))
    cases.append(case("SVD Hilbert 5", "SVD", [hilbert(5)], [u, s, vt], full=True))
    cases.append(case("SVDVals zero matrix", "SVDVals", [np.zeros((3, 2))], [np.zeros(2)]))
    nan_in = rng.standard_normal((2, 3, 3))
    nan_in[1, 2, 0] = np.nan
    cases.append(case("SVD NaN", "SVD", [nan_in], [], full=True, error="no_convergence", index=[1]))
    cases.append(case("SVDVals infinity", "SVDVals", [np.array([[1.0, np.inf], [0.0, 1.0]])], [],
                      error="no_convergence"))

    # Eigh
    for dt in dts:
        for n, batch in [(1, ()), (4, ()), (3, (2,)), (3, (0,)), (0, (2,))]:
            a = as_dt(sym(n, batch), dt)
            for upper in [False, True]:
                inp = with_other_triangle(a, upper)
                w, v = np.linalg.eigh(f64(a))
                cases.append(case("Eigh %s %s n=%d upper=%s" % (dt, batch, n, upper), "Eigh", [inp],
                                  [as_dt(w, dt), as_dt(v, dt)], upper=upper))
                cases.append(case("Eigvalsh %s %s n=%d upper=%s" % (dt, batch, n, upper), "Eigvalsh", [inp],
                                  [as_dt(w, dt)], upper=upper))
    # repeated eigenvalues: Q·diag(1, 1, 2, 2, 5)·Qᵀ; the values are exact
    q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    rep = q @ np.diag([1.0, 1.0, 2.0, 2.0, 5.0]) @ q.T
    rep = (rep + rep.T) / 2
    cases.append(case("Eigvalsh repeated", "Eigvalsh", [rep], [np.array([1.0, 1.0, 2.0, 2.0, 5.0])], upper=False))
    cases.append(case("Eigh repeated", "Eigh", [rep], [np.array([1.0, 1.0, 2.0, 2.0, 5.0]), np.linalg.eigh(rep)[1]],
                      upper=False, repeated=True))
    cases.append(case("Eigvalsh identity", "Eigvalsh", [np.eye(4)], [np.ones(4)], upper=True))
    cases.append(case("Eigvalsh Hilbert 8", "Eigvalsh", [hilbert(8)], [np.linalg.eigvalsh(hilbert(8))], upper=False))
    w, v = np.linalg.eigh(hilbert(8))
    cases.append(case("Eigh Hilbert 8", "Eigh", [hilbert(8)], [w, v], upper=False, repeated=True))
    dg = np.diag([3.0, -1.0, 2.0, 0.0])
    cases.append(case("Eigh diagonal", "Eigh", [dg], [np.array([-1.0, 0.0, 2.0, 3.0]), np.eye(4)[:, [1, 3, 2, 0]]],
                      upper=True))
    # a spectrum of tight clusters and a graded matrix, larger than the
    # others, for the QL iteration's deflation
    q, _ = np.linalg.qr(rng.standard_normal((40, 40)))
    spec = np.repeat([-3.0, 0.5, 2.0, 7.0], 10) + 1e-9 * np.arange(40)
    cl = q @ np.diag(spec) @ q.T
    cl = (cl + cl.T) / 2
    w, v = np.linalg.eigh(cl)
    cases.append(case("Eigh clustered 40", "Eigh", [cl], [w, v], upper=False, repeated=True))
    g = sym(12) * np.outer(10.0 ** np.arange(-6, 6), 10.0 ** np.arange(-6, 6)) ** 0.5
    w, v = np.linalg.eigh(g)
    cases.append(case("Eigh graded 12", "Eigh", [g], [w, v], upper=False, repeated=True))
    for scale in [1e308, 1e-306]:
        big = sym(4)
        big = big / np.abs(big).max() * scale
        w, v = np.linalg.eigh(big)
        cases.append(case("Eigh scaled by %g" % scale, "Eigh", [big], [w, v], upper=True, scaled=scale))
    nan_in = sym(3)
    nan_in[2, 1] = np.nan
    cases.append(case("Eigh NaN", "Eigh", [nan_in], [np.full(3, np.nan), np.full((3, 3), np.nan)], upper=False,
                      nan=True))
    cases.append(case("Eigvalsh NaN in the other triangle", "Eigvalsh", [nan_in], [np.linalg.eigvalsh(nan_in, "U")],
                      upper=True))

    # Eig
    for dt in dts:
        for n, batch in [(1, ()), (4, ()), (3, (2,)), (3, (0,)), (0, (2,))]:
            a = as_dt(rng.standard_normal(batch + (n, n)), dt)
            w, v = np.linalg.eig(f64(a))
            cases.append(case("Eig %s %s n=%d" % (dt, batch, n), "Eig", [a],
                              [w.astype(np.complex64), v.astype(np.complex64)]))
            cases.append(case("Eigvals %s %s n=%d" % (dt, batch, n), "Eigvals", [a],
                              [np.linalg.eigvals(f64(a)).astype(np.complex64)]))
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    w, v = np.linalg.eig(rot)
    cases.append(case("Eig rotation", "Eig", [rot], [w.astype(np.complex64), v.astype(np.complex64)]))
    s = sym(4)
    w, v = np.linalg.eig(s)
    cases.append(case("Eig symmetric", "Eig", [s], [w.astype(np.complex64), v.astype(np.complex64)]))
    cases.append(case("Eig NaN", "Eig", [np.array([[1.0, np.nan], [0.0, 1.0]])], [], error="not_finite"))
    cases.append(case("Eigvals infinity", "Eigvals", [np.array([[1.0, 0.0], [np.inf, 1.0]])], [],
                      error="not_finite"))

    write("linalg_l1.json", cases)


if __name__ == "__main__":
    main()
