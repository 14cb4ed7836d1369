"""Reference data for the float16 conversions and shortest digits in
array/dtype_test.go and array/print_test.go.

Run with /usr/bin/python3 (numpy) from this directory; it rewrites the
*.gz files next to it. gzip headers carry no time stamp, so reruns are
byte-identical.

float16_to_float32.u32.gz  numpy's float16 -> float32 for every float16 bit
                           pattern 0..65535: uint32 little-endian bits,
                           delta-coded (each word minus the previous, mod
                           2^32) so gzip can shrink the regular runs.
float32_to_float16.u16.gz  numpy's astype(float16) of float32_inputs()
                           (mirrored by f32Inputs in dtype_test.go): uint16
                           little-endian bits, delta-coded mod 2^16.
float16_shortest.txt.gz    numpy's shortest round-tripping digits of every
                           positive finite non-zero float16, one line per
                           bit pattern 0x0001..0x7bff: "<digits> <exp>",
                           meaning 0.<digits> times 10^exp with the first
                           digit non-zero (format_float_scientific with
                           unique=True: Dragon4 on the half-precision value).
"""
import gzip
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def write_gz(name, data):
    with open(HERE / name, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as z:
            z.write(data)


def delta(words, dtype):
    w = words.astype(dtype)
    d = np.empty_like(w)
    d[0] = w[0]
    d[1:] = w[1:] - w[:-1]  # unsigned: wraps modulo 2^bits
    return d.astype("<" + np.dtype(dtype).str[1:]).tobytes()


def half_to_float_bits(h):
    return int(np.array([h], np.uint16).view(np.float16).astype(np.float32).view(np.uint32)[0])


def float32_inputs():
    """float32 bit patterns that exercise every rounding case of float16."""
    out = []
    # Around every positive finite float16: the value itself, the midpoint to
    # the next one up (a tie) and the float32 values either side of it.
    # Above 65504 the "next" is 65536, so 65520 is the tie with infinity.
    for h in range(0x7C00):
        v = np.uint32(half_to_float_bits(h)).view(np.float32)
        nxt = np.float32(65536.0) if h == 0x7BFF else np.uint32(half_to_float_bits(h + 1)).view(np.float32)
        m = int(np.float32((np.float64(v) + np.float64(nxt)) / 2).view(np.uint32))
        out += [int(np.float32(v).view(np.uint32)), m - 1, m, m + 1]
    out += [x | 0x80000000 for x in out]
    # A sweep over the whole float32 bit space: every exponent, float32
    # subnormals, overflow, infinities and NaNs with many payloads.
    out += [(k * 65521) & 0xFFFFFFFF for k in range(65553)]
    out += [
        0x00000000, 0x80000000, 0x7F800000, 0xFF800000,  # zeros, infinities
        0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0x7FA00000, 0xFF802000,  # NaNs
        0x00000001, 0x007FFFFF, 0x00800000,  # float32 subnormals, min normal
        0x33000000, 0x32FFFFFF, 0x33000001,  # 2^-25: half the smallest half subnormal
        0x33400000, 0x33C00000, 0x34200000,  # 1.5, 3 and 5 times 2^-25
        0x387FC000, 0x387FE000, 0x38800000,  # around the smallest normal half
        0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000,  # 65504 .. 65536
        0x7F7FFFFF, 0x501502F9,  # max float32, 1e10
    ]
    return np.array(out, dtype=np.uint32)


def digits(h):
    s = np.format_float_scientific(np.array([h], np.uint16).view(np.float16)[0], unique=True, trim="-")
    mant, exp = s.split("e")
    d = mant.replace(".", "")
    return "%s %d" % (d, int(exp) + 1)


def main():
    all16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    f32 = all16.view(np.float16).astype(np.float32).view(np.uint32)
    write_gz("float16_to_float32.u32.gz", delta(f32, np.uint32))

    inputs = float32_inputs()
    with np.errstate(over="ignore"):  # overflow to infinity is a case under test
        f16 = inputs.view(np.float32).astype(np.float16).view(np.uint16)
    write_gz("float32_to_float16.u16.gz", delta(f16, np.uint16))

    lines = [digits(h) for h in range(1, 0x7C00)]
    write_gz("float16_shortest.txt.gz", ("\n".join(lines) + "\n").encode())


if __name__ == "__main__":
    main()
