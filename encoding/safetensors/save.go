package safetensors

import (
	"encoding/binary"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/internal/tensorio"
)

// Save writes tensors and metadata to the file at path in the
// safetensors format, as the reference writer lays it out: tensors
// ordered by dtype alignment (largest first) and then by name, each
// directly after the last, behind a header padded to a multiple of 8
// bytes, so every tensor's data is aligned for its dtype. Metadata, if
// any, is the header's "__metadata__". Every fathom dtype can be saved:
// complex64 as C64, which safetensors added in version 0.6 (older readers
// do not know it).
//
// Save evaluates the arrays first (the first error is returned before
// anything is written), writes strided arrays in row-major order, and
// replaces the file atomically: it writes a temporary file in the same
// directory, syncs it and renames it over path, so a failure at any point
// leaves the old file whole. Names must be valid UTF-8, as must metadata,
// and no tensor may be named "__metadata__".
func Save(path string, tensors map[string]*array.Array, metadata map[string]string) error {
	const op = "safetensors.Save"
	list := make([]*tensorInfo, 0, len(tensors))
	arrays := map[*tensorInfo]*array.Array{}
	for name, a := range tensors {
		switch {
		case a == nil:
			return fail(op, nil, "tensor %q is nil", name)
		case name == metadataKey:
			return fail(op, nil, "a tensor cannot be named %q", metadataKey)
		case !utf8.ValidString(name):
			return fail(op, nil, "tensor name %q is not valid UTF-8", name)
		}
		k, ok := tensorio.FromDType(a.DType())
		if !ok || k.Safetensors == "" {
			return fail(op, ErrUnsupported, "tensor %q: dtype %v has no safetensors name", name, a.DType())
		}
		t := &tensorInfo{name: name, dtype: k.Safetensors, kind: k, shape: a.Shape()}
		list = append(list, t)
		arrays[t] = a
	}
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fail(op, nil, "metadata %q: %q is not valid UTF-8", k, v)
		}
	}
	slices.SortFunc(list, func(a, b *tensorInfo) int {
		if a.kind.Rank() != b.kind.Rank() {
			return b.kind.Rank() - a.kind.Rank()
		}
		return cmpStr(a.name, b.name)
	})
	evals := make([]*array.Array, len(list))
	var at uint64
	for i, t := range list {
		a := arrays[t]
		evals[i] = a
		t.begin = at
		at += uint64(a.NBytes())
		t.end = at
	}
	hdr := formatHeader(list, metadata)
	if len(hdr) > MaxHeaderSize {
		return fail(op, nil, "the header would be %d bytes, above the %d readers accept", len(hdr), MaxHeaderSize)
	}
	if err := array.Eval(evals...); err != nil {
		return err
	}
	err := tensorio.WriteFileAtomic(path, func(w io.Writer) error {
		var nb [8]byte
		binary.LittleEndian.PutUint64(nb[:], uint64(len(hdr)))
		if _, err := w.Write(nb[:]); err != nil {
			return err
		}
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		for _, a := range evals {
			if err := tensorio.WriteArray(w, a, true, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fail(op, err, "%s: %v", path, err)
	}
	return nil
}
