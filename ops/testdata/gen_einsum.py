"""numpy reference cases for ops.Einsum and ops.EinsumPath: writes einsum.json.

Run with Debian's numpy: /usr/bin/python3 ops/testdata/gen_einsum.py

Each case holds the operands, numpy.einsum's result, and the FLOP count of
the path numpy.einsum_path(optimize="greedy") picks (the sum of its steps'
counts, recomputed exactly with numpy's own helpers; numpy's report prints
that sum plus one, rounded), which EinsumPath must not exceed.
"""
import numpy as np
from numpy.core import einsumfunc as ef

from refgen import case, write

rng = np.random.default_rng(19)


def operand(shape, dtype):
    if dtype == "complex64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    if dtype in ("int32", "int64"):
        return rng.integers(-4, 5, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def greedy_flops(subscripts, ops):
    path, report = np.einsum_path(subscripts, *ops, optimize="greedy")
    inputs, output, _ = ef._parse_einsum_input((subscripts,) + tuple(ops))
    terms = inputs.split(",")
    sizes = {}
    for term, op in zip(terms, ops):
        for c, d in zip(term, np.shape(op)):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
    sets = [set(t) for t in terms]
    total = 0
    for inds in path[1:]:
        inds = tuple(sorted(inds, reverse=True))
        _, sets, removed, contract = ef._find_contraction(inds, sets, set(output))
        total += ef._flop_count(contract, removed, len(inds), sizes)
    printed = float(report.split("Optimized FLOP count:")[1].split()[0])
    assert abs(printed - (total + 1)) <= 5e-4 * (total + 1), (subscripts, printed, total)
    return total, [list(p) for p in path[1:]]


CASES = [
    # name, subscripts, shapes, dtype
    ("matmul", "ij,jk->ik", [(2, 3), (3, 4)], "float64"),
    ("matmul implicit", "ij,jk", [(2, 3), (3, 4)], "float64"),
    ("batched matmul", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], "float64"),
    ("a times b transposed", "ij,kj->ik", [(3, 4), (5, 4)], "float64"),
    ("a transposed times b", "ji,jk->ik", [(4, 3), (4, 5)], "float64"),
    ("matvec", "ij,j->i", [(3, 4), (4,)], "float64"),
    ("vecmat", "i,ij->j", [(3,), (3, 4)], "float64"),
    ("diagonal", "ii->i", [(3, 3)], "float64"),
    ("trace implicit", "ii", [(4, 4)], "float64"),
    ("trace explicit", "ii->", [(4, 4)], "float64"),
    ("partial trace", "iij->j", [(3, 3, 4)], "float64"),
    ("triple diagonal", "iii->i", [(3, 3, 3)], "float64"),
    ("diagonal kept with others", "ijj,jk->ik", [(2, 3, 3), (3, 4)], "float64"),
    ("trace of a product", "ij,ji->", [(3, 4), (4, 3)], "float64"),
    ("sum all", "abcd->", [(2, 3, 2, 2)], "float64"),
    ("sum one axis", "ij->i", [(3, 4)], "float64"),
    ("transpose", "ij->ji", [(2, 3)], "float64"),
    ("transpose implicit", "ji", [(2, 3)], "float64"),
    ("identity", "ij", [(2, 3)], "float64"),
    ("permute 3-d", "ijk->kji", [(2, 3, 4)], "float64"),
    ("dot", "i,i", [(5,), (5,)], "float64"),
    ("hadamard", "i,i->i", [(5,), (5,)], "float64"),
    ("outer", "i,j->ij", [(3,), (4,)], "float64"),
    ("outer implicit", "i,j", [(3,), (4,)], "float64"),
    ("outer of matrices", "ab,cd->abcd", [(2, 3), (2, 2)], "float64"),
    ("three outer", "i,j,k->ijk", [(2,), (3,), (2,)], "float64"),
    ("frobenius", "ij,ij->", [(3, 4), (3, 4)], "float64"),
    ("batched dot", "ijk,ijk->ij", [(2, 3, 4), (2, 3, 4)], "float64"),
    ("contract leading", "ij,ik->jk", [(4, 3), (4, 5)], "float64"),
    ("two contracted", "ijk,jil->kl", [(3, 2, 4), (2, 3, 5)], "float64"),
    ("bilinear", "bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)], "float64"),
    ("attention scores", "bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)], "float64"),
    ("attention values", "bhqk,bhkd->bhqd", [(2, 2, 3, 5), (2, 2, 5, 4)], "float64"),
    ("ellipsis matmul broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)], "float64"),
    ("ellipsis diagonal", "...ii->...i", [(2, 3, 3)], "float64"),
    ("ellipsis sum leading label", "i...->...", [(3, 2, 4)], "float64"),
    ("ellipsis batched dot broadcast", "...i,...i->...", [(2, 3, 4), (4,)], "float64"),
    ("ellipsis implicit", "...ij,jk", [(2, 3, 4), (4, 2)], "float64"),
    ("ellipsis in the middle", "i...j,j...->i...", [(2, 3, 4), (4, 3)], "float64"),
    ("size-1 label broadcast", "ij,j->ij", [(3, 4), (1,)], "float64"),
    ("size-1 label contracted", "ij,jk->ik", [(3, 1), (4, 2)], "float64"),
    ("uppercase labels", "Ab,bC->AC", [(2, 3), (3, 4)], "float64"),
    ("implicit uppercase first", "aB,Bc", [(2, 3), (3, 4)], "float64"),
    ("scalar times matrix", ",ij->ij", [(), (2, 3)], "float64"),
    ("two scalars", ",->", [(), ()], "float64"),
    ("scalar alone", "->", [()], "float64"),
    ("empty rows", "ij,jk->ik", [(0, 3), (3, 4)], "float64"),
    ("empty inner", "ij,jk->ik", [(2, 0), (0, 3)], "float64"),
    ("empty diagonal", "ii->i", [(0, 0)], "float64"),
    ("empty trace", "ii", [(0, 0)], "float64"),
    ("chain of three", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "float64"),
    ("chain of three to a scalar", "ij,jk,kl->", [(2, 3), (3, 4), (4, 2)], "float64"),
    ("three vectors", "i,i,i->", [(4,), (4,), (4,)], "float64"),
    ("batched chain", "ijk,kl,lm->ijm", [(2, 3, 4), (4, 5), (5, 2)], "float64"),
    ("chain of four", "ij,jk,kl,lm->im", [(10, 20), (20, 3), (3, 30), (30, 4)], "float64"),
    ("chain of four, wide middle", "ab,bc,cd,de->ae", [(3, 40), (40, 2), (2, 40), (40, 3)], "float64"),
    ("four operands, tensor", "abc,cd,de,ef->af", [(2, 3, 4), (4, 5), (5, 3), (3, 2)], "float64"),
    ("four operands, star", "ia,ib,ic,id->abcd", [(5, 2), (5, 3), (5, 2), (5, 2)], "float64"),
    ("five operands", "ea,fb,abcd,gc,hd->efgh", [(3, 2), (3, 2), (2, 2, 2, 2), (3, 2), (3, 2)], "float64"),
    ("six operand chain", "ab,bc,cd,de,ef,fg->ag", [(2, 8), (8, 3), (3, 9), (9, 2), (2, 7), (7, 3)], "float64"),
    ("five operand ring", "ab,bc,cd,de,ea->", [(3, 4), (4, 5), (5, 3), (3, 4), (4, 3)], "float64"),
    ("float32 matmul", "ij,jk->ik", [(3, 4), (4, 2)], "float32"),
    ("int32 chain", "ij,jk,k->i", [(2, 3), (3, 4), (4,)], "int32"),
    ("int64 trace", "ii", [(3, 3)], "int64"),
    ("complex64 matmul", "ij,jk->ik", [(2, 3), (3, 2)], "complex64"),
    ("complex64 diagonal dot", "ii,i->i", [(3, 3), (3,)], "complex64"),
]


def main():
    cases = []
    for name, subs, shapes, dt in CASES:
        ops = [operand(s, dt) for s in shapes]
        want = np.asarray(np.einsum(subs, *ops))
        flops, path = greedy_flops(subs, ops)
        cases.append(case(name, "Einsum", ops, [want], subscripts=subs, numpy_greedy_flops=flops,
                          numpy_greedy_path=path))
    mixed = [operand((3,), "int32"), operand((3,), "float32")]
    flops, path = greedy_flops("i,i->", mixed)
    # fathom promotes int32 with float32 to float32 (MLX's rule), numpy to
    # float64.
    cases.append(case("int32 with float32 promotes", "Einsum", mixed,
                      [np.einsum("i,i->", *mixed).astype(np.float32)],
                      subscripts="i,i->", numpy_greedy_flops=flops, numpy_greedy_path=path))
    write("einsum.json", cases)


if __name__ == "__main__":
    main()
