#!/usr/bin/python3
"""Reference safetensors files for encoding/safetensors.

    /usr/bin/python3 gen_safetensors.py            # (re)writes the files here
    /usr/bin/python3 gen_safetensors.py check DIR  # checks files fathom wrote

Run from this directory. The safetensors Python package is not available
here, so this script writes and reads the format itself, with struct and
json, following the specification (https://huggingface.co/docs/safetensors):
8 bytes of little-endian header length, a JSON header (each tensor's dtype,
shape and data_offsets, and an optional "__metadata__" of strings), then
the data, little-endian and row-major. write() lays files out as the
reference writer does (tensors by dtype alignment, largest first, then by
name; header padded with spaces to a multiple of 8); write_unsorted() as a
careless writer might (name order, no padding), which readers must accept.

The first form writes the files and expected.json (each tensor's dtype,
shape and row-major values; bfloat16 as float values, complex as [re, im]
pairs; for the dtypes fathom cannot load, "raw": the tensor's bytes) so
the Go tests need no Python. The second form is how the Go test
TestPythonReadsFathomFiles checks fathom's files: it parses every file in
DIR named in DIR/manifest.json (same form as expected.json, plus
"__metadata__") with this script's reader, which checks the layout the
specification requires, and compares values with numpy.
"""
import json
import os
import struct
import sys

import numpy as np

# safetensors dtype -> numpy dtype (BF16 is handled apart: numpy has none)
NP = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
    "I32": "int32", "U32": "uint32", "I64": "int64", "U64": "uint64",
    "F16": "float16", "F32": "float32", "F64": "float64", "C64": "complex64",
}
# the reference Dtype enum, in increasing alignment
ORDER = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
         "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64", "I64", "U64"]
SIZE = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4,
        "U32": 4, "F32": 4, "C64": 8, "F64": 8, "I64": 8, "U64": 8}
# the integer dtypes fathom gained after the others: their values reach
# both ends of their range
NEW_INTS = ["I8", "I16", "U16", "U32", "U64"]
# the dtypes fathom has not yet (the 8-, 6- and 4-bit floats), with their
# bits per element: files hold them as raw bytes
NOT_YET = {"F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F6_E2M3": 6, "F6_E3M2": 6, "F4": 4}


class Raw:
    """A tensor of a dtype numpy has not: its shape and its bytes."""

    def __init__(self, st, shape, data):
        n = int(np.prod(shape, dtype=np.int64))
        assert len(data) * 8 == n * NOT_YET[st], "%s %s: %d bytes" % (st, shape, len(data))
        self.shape, self.data = tuple(shape), bytes(data)


def values(st, shape):
    """Deterministic values, exact in the dtype, with negatives and fractions."""
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n)
    if st == "BOOL":
        v = (i % 3) != 1
    elif st in NEW_INTS:
        # the minimum and the maximum, then values spread over the range
        info = np.iinfo(NP[st])
        lo, span = int(info.min), int(info.max) - int(info.min) + 1
        v = [lo, int(info.max)] + [lo + (k * 0x9E3779B97F4A7C15 + 777) % span for k in range(n)]
        return np.array(v[:n], dtype=NP[st]).reshape(shape)
    elif st in ("U8", "U16", "U32", "U64"):
        v = (i * 37 + 5) % 200
    elif st in ("I8", "I16", "I32"):
        v = (i * 13 - 50) % 120 - 60
    elif st == "I64":
        v = (i * 13 - 50) * 5_000_000_011
    elif st == "C64":
        v = (i * 0.5 - 2) + 1j * (1.25 - i * 0.25)
    else:  # floats; these are exact in bfloat16 too
        v = i * 0.75 - 3.5
    dt = "float32" if st == "BF16" else NP[st]
    return np.asarray(v).astype(dt).reshape(shape)


def to_bytes(st, a):
    if isinstance(a, Raw):
        return a.data
    if st == "BF16":
        return (np.ascontiguousarray(a, "<f4").view("<u4") >> 16).astype("<u2").tobytes()
    return np.ascontiguousarray(a, np.dtype(NP[st]).newbyteorder("<")).tobytes()


def from_bytes(st, b, shape):
    if st == "BF16":
        u = np.frombuffer(b, "<u2").astype("<u4") << 16
        return u.view("<f4").reshape(shape)
    return np.frombuffer(b, np.dtype(NP[st]).newbyteorder("<")).reshape(shape)


def flat(st, a):
    out = []
    for x in np.asarray(a).reshape(-1):
        if st == "BOOL":
            out.append(bool(x))
        elif st[0] in "IU":
            out.append(int(x))
        elif st == "C64":
            out.append([float(x.real), float(x.imag)])
        else:
            out.append(float(x))
    return out


def header_bytes(entries, metadata, pad=True):
    h = {}
    if metadata is not None:
        h["__metadata__"] = metadata
    for name, st, shape, begin, end in entries:
        h[name] = {"dtype": st, "shape": list(shape), "data_offsets": [begin, end]}
    text = json.dumps(h, separators=(",", ":")).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return text


def write(path, tensors, metadata=None):
    """tensors: {name: (st, array)}. The reference writer's layout."""
    names = sorted(tensors, key=lambda n: (-ORDER.index(tensors[n][0]), n))
    entries, data, at = [], b"", 0
    for name in names:
        st, a = tensors[name]
        b = to_bytes(st, a)
        entries.append((name, st, a.shape, at, at + len(b)))
        data += b
        at += len(b)
    hdr = header_bytes(entries, metadata)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr + data)


def write_unsorted(path, tensors):
    """Name order, header not padded: data may be misaligned."""
    entries, data, at = [], b"", 0
    for name in sorted(tensors):
        st, a = tensors[name]
        b = to_bytes(st, a)
        entries.append((name, st, a.shape, at, at + len(b)))
        data += b
        at += len(b)
    hdr = header_bytes(entries, None, pad=False)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr + data)


def read(path):
    """Parses a file, checking what the specification requires."""
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    assert 8 + n <= len(buf) and n <= 100_000_000, "bad header length"
    hdr = json.loads(buf[8:8 + n].decode("utf-8"))
    data = buf[8 + n:]
    meta = hdr.pop("__metadata__", None)
    spans = sorted((v["data_offsets"], k) for k, v in hdr.items())
    at = 0
    for (b, e), k in spans:
        assert b == at and e >= b, "tensor %s: offsets [%d, %d] do not follow %d" % (k, b, e, at)
        at = e
    assert at == len(data), "tensors cover %d of %d data bytes" % (at, len(data))
    out = {}
    for k, v in hdr.items():
        st, shape = v["dtype"], v["shape"]
        b, e = v["data_offsets"]
        assert e - b == int(np.prod(shape, dtype=np.int64)) * SIZE[st], "tensor %s: size" % k
        out[k] = (st, from_bytes(st, data[b:e], shape))
    return out, meta, n


def entry(st, a):
    if isinstance(a, Raw):
        return {"dtype": st, "shape": list(a.shape), "raw": list(a.data)}
    return {"dtype": st, "shape": list(a.shape), "values": flat(st, a)}


def generate():
    expected = {}

    def save(path, tensors, metadata=None, unsorted=False):
        if unsorted:
            write_unsorted(path, tensors)
        else:
            write(path, tensors, metadata)
        e = {k: entry(st, a) for k, (st, a) in tensors.items()}
        if metadata is not None:
            e["__metadata__"] = metadata
        expected[path] = e

    shared = ["BOOL", "U8", "I32", "I64", "F16", "BF16", "F32", "F64", "C64"] + NEW_INTS
    tensors = {"t_" + st.lower(): (st, values(st, (2, 3))) for st in shared}
    tensors["scalar"] = ("F32", np.array(1.5, np.float32))
    tensors["empty"] = ("F32", np.zeros((0, 4), np.float32))
    tensors["layers.0.weight"] = ("F16", values("F16", (4, 2, 3)))
    save("all.safetensors", tensors, {"format": "pt", "note": "ünïcode <&>"})
    save("unsorted.safetensors", {k: tensors[k] for k in ("t_u8", "t_f64", "t_f16", "t_bool", "t_i16", "t_u64", "t_u32")}, unsorted=True)
    save("nothing.safetensors", {})
    save("only_metadata.safetensors", {}, {"a": "b"})
    # dtypes fathom has not yet: Open works, Get of these is an error, Get
    # of the others works
    save("unsupported.safetensors", {
        "e5m2": ("F8_E5M2", Raw("F8_E5M2", (2, 2), [0x3C, 0xBC, 0x40, 0x00])),  # 1, -1, 2, 0
        "e4m3": ("F8_E4M3", Raw("F8_E4M3", (3,), [0x38, 0xB8, 0x40])),  # 1, -1, 2
        "e8m0": ("F8_E8M0", Raw("F8_E8M0", (2,), [0x7F, 0x80])),  # 1, 2
        "e2m3": ("F6_E2M3", Raw("F6_E2M3", (4,), [0x08, 0x82, 0x20])),
        "e3m2": ("F6_E3M2", Raw("F6_E3M2", (2, 4), [0x0C, 0xC3, 0x30, 0x0C, 0xC3, 0x30])),
        "fp4": ("F4", Raw("F4", (2, 3), [0x12, 0x34, 0x56])),
        "ok": ("F32", values("F32", (3,))), "ok_u64": ("U64", values("U64", (2,))),
        "ok_i8": ("I8", values("I8", (3,))),
    })
    with open("expected.json", "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


def check(d):
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    for name, want in sorted(manifest.items()):
        got, meta, n = read(os.path.join(d, name))
        if n % 8 != 0:
            raise SystemExit("%s: header of %d bytes is not padded to 8" % (name, n))
        if meta != want.pop("__metadata__", None):
            raise SystemExit("%s: metadata %s" % (name, meta))
        if sorted(got) != sorted(want):
            raise SystemExit("%s: tensors %s, want %s" % (name, sorted(got), sorted(want)))
        for k, w in want.items():
            st, a = got[k]
            if entry(st, a) != w:
                raise SystemExit("%s: %s is %s, want %s" % (name, k, entry(st, a), w))
        # the reference layout: by alignment, largest first, then name
        with open(os.path.join(d, name), "rb") as f:
            f.read(8)
            hdr = json.loads(f.read(n))
        hdr.pop("__metadata__", None)
        by_offset = [k for _, k in sorted((v["data_offsets"], k) for k, v in hdr.items())]
        ref = sorted(hdr, key=lambda k: (-ORDER.index(hdr[k]["dtype"]), k))
        if by_offset != ref:
            raise SystemExit("%s: order %s, want the reference writer's %s" % (name, by_offset, ref))
    print("python read %d files" % len(manifest))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        check(sys.argv[2])
    else:
        generate()
