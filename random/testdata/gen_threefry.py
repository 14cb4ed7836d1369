"""Reference values for package random, from a numpy transcription of
JAX's threefry PRNG (jax/_src/prng.py: threefry2x32, the non-partitionable
threefry_split and threefry_random_bits that MLX's random::bits follows)
and of MLX's uniform (mlx/random.cpp).

Run with Debian's numpy:  /usr/bin/python3 random/testdata/gen_threefry.py
It writes random/testdata/threefry.json, which is committed.

The transcription is checked first against values from outside it:
- Random123's known-answer vectors for threefry2x32_20 (kat_vectors in
  the Random123 distribution; the same three JAX's testThreefry2x32
  checks);
- the two values issue 17 quotes from JAX/MLX: split(key(0)) and
  bits(key(0), (3, 1)).
Every other expected value in the file comes from this transcription.
"""
import json
import os

import numpy as np

U32 = np.uint32
ROT = [[13, 15, 26, 6], [17, 29, 16, 24]]


def rotl(x, r):
    return ((x << U32(r)) | (x >> U32(32 - r))).astype(U32)


def threefry2x32_block(k0, k1, x0, x1):
    """JAX's _threefry2x32_lowering on uint32 arrays x0, x1."""
    with np.errstate(over="ignore"):
        ks = [U32(k0), U32(k1), U32(k0) ^ U32(k1) ^ U32(0x1BD11BDA)]
        x = [x0.astype(U32) + ks[0], x1.astype(U32) + ks[1]]
        for i in range(5):
            for r in ROT[i % 2]:
                x[0] = x[0] + x[1]
                x[1] = rotl(x[1], r) ^ x[0]
            x[0] = x[0] + ks[(i + 1) % 3]
            x[1] = x[1] + ks[(i + 2) % 3] + U32(i + 1)
    return x[0], x[1]


def threefry_2x32(key, count):
    """jax.prng.threefry_2x32(keypair, count)."""
    count = np.asarray(count, U32)
    flat = count.ravel()
    odd = flat.size % 2
    if odd:
        flat = np.concatenate([flat, U32([0])])
    h = flat.size // 2
    y0, y1 = threefry2x32_block(key[0], key[1], flat[:h], flat[h:])
    out = np.concatenate([y0, y1])
    if odd:
        out = out[:-1]
    return out.reshape(count.shape)


def key(seed):
    return np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], U32)


def split(k, n):
    return threefry_2x32(k, np.arange(n * 2, dtype=U32)).reshape(n, 2)


def random_bits(k, width, shape):
    """threefry_random_bits for bit widths 8, 16, 32 (width in bytes)."""
    size = int(np.prod(shape))
    bw = 8 * width
    max_count = -(-bw * size // 32)
    bits = threefry_2x32(k, np.arange(max_count, dtype=U32))
    if bw == 32:
        return bits.reshape(shape)
    dt = {8: np.uint8, 16: np.uint16}[bw]
    # bits.view(dtype)[:size], in little-endian order
    return bits.astype("<u4").view(dt)[:size].reshape(shape)


def uniform32(k, shape, low, high, dtype):
    """mlx::core::random::uniform for float32/float16 (float32 math, cast)."""
    b = random_bits(k, 4, shape)
    upper = {"float32": np.nextafter(np.float32(1), np.float32(0)),
             "float16": np.float32(np.float16(1) - np.float16(2 ** -11))}[dtype]
    u = np.minimum(b.astype(np.float32) / np.float32(4294967296.0), upper).astype(dtype)
    lo, hi = np.array(low, dtype), np.array(high, dtype)
    return ((hi - lo) * u + lo).astype(dtype)


def hexs(a):
    return [int(v) for v in np.asarray(a).ravel()]


def main():
    # Random123 kat_vectors, threefry2x32 20 rounds: ctr, key -> out
    kat = [
        ([0x00000000, 0x00000000], [0x00000000, 0x00000000], [0x6B200159, 0x99BA4EFE]),
        ([0xFFFFFFFF, 0xFFFFFFFF], [0xFFFFFFFF, 0xFFFFFFFF], [0x1CB996FC, 0xBB002BE7]),
        ([0x243F6A88, 0x85A308D3], [0x13198A2E, 0x03707344], [0xC4923A9C, 0x483DF7A0]),
    ]
    for ctr, k, want in kat:
        got = threefry_2x32(np.array(k, U32), np.array(ctr, U32))
        assert hexs(got) == want, (ctr, k, [hex(v) for v in hexs(got)])
    # issue 17's JAX/MLX values
    assert hexs(split(key(0), 2)) == [4146024105, 967050713, 2718843009, 1272950319]
    assert hexs(random_bits(key(0), 4, (3, 1))) == [4146024105, 1351547692, 2718843009]

    cases = {"kat": [{"counts": c, "key": k, "want": w} for c, k, w in kat]}
    cases["split"] = []
    for seed, n in [(0, 2), (42, 3), (2 ** 40 + 3, 1), (7, 5)]:
        cases["split"].append({"seed": seed, "n": n, "want": hexs(split(key(seed), n))})
    cases["bits"] = []
    for seed, shape, width in [(0, [3, 1], 4), (42, [5], 4), (0, [2, 3], 2), (7, [7], 1), (2 ** 40 + 3, [4, 4], 4),
                               (123, [1], 2), (123, [3], 2), (9, [5], 1), (9, [13], 1), (1, [0], 4), (5, [2, 2, 3], 4),
                               (0xFFFFFFFFFFFFFFFF, [6], 4), (11, [1000], 4), (11, [999], 2), (11, [1001], 1)]:
        cases["bits"].append({"seed": seed, "shape": shape, "width": width,
                              "want": hexs(random_bits(key(seed), width, shape))})
    # vmap over keys: each key's own bits
    ks = split(key(5), 3)
    cases["vmap"] = {"keys": hexs(ks), "shape": [4], "width": 4,
                     "want": [hexs(random_bits(k, 4, [4])) for k in ks]}
    cases["uniform"] = []
    for seed, shape, lo, hi, dt in [(0, [8], 0.0, 1.0, "float32"), (3, [5], -2.0, 3.0, "float32"),
                                    (4, [8], 0.0, 1.0, "float16")]:
        u = uniform32(key(seed), shape, lo, hi, dt)
        cases["uniform"].append({"seed": seed, "shape": shape, "low": lo, "high": hi, "dtype": dt,
                                 "want": [float(v) for v in u.ravel()]})
    cases["threefry"] = []
    for seed, counts in [(0, [0, 1, 2, 3, 4]), (99, [5, 6, 7, 8]), (1, [12345])]:
        cases["threefry"].append({"seed": seed, "counts": counts,
                                  "want": hexs(threefry_2x32(key(seed), np.array(counts, U32)))})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "threefry.json")
    with open(path, "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
