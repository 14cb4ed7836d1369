package safetensors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/fathom-go/fathom/encoding/internal/tensorio"
)

// MaxHeaderSize is the largest header Open accepts, as in the reference
// implementation (100 MB).
const MaxHeaderSize = 100_000_000

// metadataKey is the header's entry for free-form string metadata.
const metadataKey = "__metadata__"

// tensorInfo is one tensor's entry in the header.
type tensorInfo struct {
	name       string
	dtype      string // as the file names it: "F32"
	kind       tensorio.Kind
	shape      []int
	begin, end uint64 // byte offsets in the data section
}

// headerError is a header that breaks the format.
type headerError struct{ msg string }

func (e headerError) Error() string { return e.msg }

func herr(format string, args ...any) error { return headerError{fmt.Sprintf(format, args...)} }

// parseHeader parses and validates a header for a data section of
// dataLen bytes, as the reference implementation does: a JSON object
// whose entries are tensors ({"dtype", "shape", "data_offsets"}) and an
// optional "__metadata__" object of strings; no name twice (in the object
// or in any entry); every shape × dtype size computed without overflow and
// equal to its offsets' span; the spans, in order, tiling the data
// section exactly, with no gap, overlap or byte left over.
func parseHeader(hdr []byte, dataLen uint64) (map[string]*tensorInfo, map[string]string, error) {
	if !utf8.Valid(hdr) {
		return nil, nil, herr("header is not valid UTF-8")
	}
	if len(hdr) == 0 || hdr[0] != '{' {
		return nil, nil, herr("header does not start with '{' (not a JSON object)")
	}
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	tensors := map[string]*tensorInfo{}
	var meta map[string]string
	seenMeta := false
	err := object(dec, func(key string) error {
		if key == metadataKey {
			if seenMeta {
				return herr("%q appears twice", metadataKey)
			}
			seenMeta = true
			return decodeMetadata(dec, &meta)
		}
		if _, dup := tensors[key]; dup {
			return herr("tensor %q appears twice", key)
		}
		t, err := decodeTensor(dec, key)
		if err != nil {
			return err
		}
		tensors[key] = t
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, herr("text after the header's JSON object")
	}
	// The spans must tile the data section.
	list := make([]*tensorInfo, 0, len(tensors))
	for _, t := range tensors {
		list = append(list, t)
	}
	slices.SortFunc(list, func(a, b *tensorInfo) int {
		switch {
		case a.begin != b.begin:
			return cmp64(a.begin, b.begin)
		case a.end != b.end:
			return cmp64(a.end, b.end)
		}
		return cmpStr(a.name, b.name)
	})
	var at uint64
	for _, t := range list {
		if t.begin != at {
			if t.begin < at {
				return nil, nil, herr("tensor %q: data_offsets [%d, %d] overlap the tensor before it, which ends at %d", t.name, t.begin, t.end, at)
			}
			return nil, nil, herr("tensor %q: data_offsets [%d, %d] leave a gap after byte %d", t.name, t.begin, t.end, at)
		}
		if t.end > dataLen {
			return nil, nil, herr("tensor %q: data_offsets [%d, %d] run past the %d bytes of data", t.name, t.begin, t.end, dataLen)
		}
		at = t.end
	}
	if at != dataLen {
		return nil, nil, herr("the tensors cover %d bytes of data, but the file has %d", at, dataLen)
	}
	return tensors, meta, nil
}

func cmp64(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// object reads a JSON object from dec, calling entry for each key with
// the decoder positioned at its value (which entry must consume).
func object(dec *json.Decoder, entry func(key string) error) error {
	tok, err := dec.Token()
	if err != nil {
		return herr("invalid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return herr("expected a JSON object, found %v", tok)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return herr("invalid JSON: %v", err)
		}
		key, ok := tok.(string)
		if !ok {
			return herr("invalid JSON key %v", tok)
		}
		if err := entry(key); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return herr("invalid JSON: %v", err)
	}
	return nil
}

func decodeMetadata(dec *json.Decoder, meta *map[string]string) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return herr("%s: invalid JSON: %v", metadataKey, err)
	}
	if string(raw) == "null" {
		return nil
	}
	md := json.NewDecoder(bytes.NewReader(raw))
	m := map[string]string{}
	err := object(md, func(key string) error {
		if _, dup := m[key]; dup {
			return herr("%s: key %q appears twice", metadataKey, key)
		}
		var v any
		if err := md.Decode(&v); err != nil {
			return herr("%s: invalid JSON: %v", metadataKey, err)
		}
		s, ok := v.(string)
		if !ok {
			return herr("%s: value of %q is not a string", metadataKey, key)
		}
		m[key] = s
		return nil
	})
	if err != nil {
		return err
	}
	*meta = m
	return nil
}

func decodeTensor(dec *json.Decoder, name string) (*tensorInfo, error) {
	t := &tensorInfo{name: name}
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, herr("tensor %q: invalid JSON: %v", name, err)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, herr("tensor %q: entry is not a JSON object", name)
	}
	td := json.NewDecoder(bytes.NewReader(raw))
	td.UseNumber()
	seen := map[string]bool{}
	var shape, offsets []json.Number
	err := object(td, func(key string) error {
		if seen[key] {
			return herr("tensor %q: field %q appears twice", name, key)
		}
		seen[key] = true
		var err error
		switch key {
		case "dtype":
			var v any
			if err = td.Decode(&v); err == nil {
				s, ok := v.(string)
				if !ok {
					return herr("tensor %q: dtype is not a string", name)
				}
				t.dtype = s
			}
		case "shape":
			shape, err = numbers(td)
		case "data_offsets":
			offsets, err = numbers(td)
		default:
			var skip json.RawMessage // unknown fields are ignored, as by the reference
			err = td.Decode(&skip)
		}
		if err != nil {
			if _, ok := err.(headerError); ok {
				return err
			}
			return herr("tensor %q: field %q: %v", name, key, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"dtype", "shape", "data_offsets"} {
		if !seen[f] {
			return nil, herr("tensor %q has no %q", name, f)
		}
	}
	if shape == nil || offsets == nil {
		return nil, herr("tensor %q: shape and data_offsets must be arrays", name)
	}
	k, ok := tensorio.FromSafetensors(t.dtype)
	if !ok {
		return nil, herr("tensor %q: unknown dtype %q", name, t.dtype)
	}
	t.kind = k
	if len(offsets) != 2 {
		return nil, herr("tensor %q: data_offsets has %d numbers, not 2", name, len(offsets))
	}
	var err2 error
	if t.begin, err2 = unsigned(offsets[0]); err2 == nil {
		t.end, err2 = unsigned(offsets[1])
	}
	if err2 != nil {
		return nil, herr("tensor %q: data_offsets: %v", name, err2)
	}
	if t.end < t.begin {
		return nil, herr("tensor %q: data_offsets [%d, %d] end before they begin", name, t.begin, t.end)
	}
	if len(shape) > maxDims {
		return nil, herr("tensor %q: shape has %d dimensions (at most %d)", name, len(shape), maxDims)
	}
	// Size in bits, checked for overflow at every step; an empty shape
	// has no elements whatever the other dimensions are.
	t.shape = make([]int, len(shape))
	n := uint64(1)
	overflow := false
	for i, s := range shape {
		d, err := unsigned(s)
		if err != nil || d > math.MaxInt {
			return nil, herr("tensor %q: shape %v: dimension %s is not a non-negative int", name, shape, s)
		}
		t.shape[i] = int(d)
		hi, lo := bits.Mul64(n, d)
		overflow = overflow || hi != 0
		n = lo
	}
	if slices.Contains(t.shape, 0) {
		n, overflow = 0, false
	}
	var nbytes uint64
	if k.Bits%8 == 0 {
		hi, lo := bits.Mul64(n, uint64(k.Size()))
		overflow = overflow || hi != 0
		nbytes = lo
	} else {
		hi, nbits := bits.Mul64(n, uint64(k.Bits))
		overflow = overflow || hi != 0
		if !overflow && nbits%8 != 0 {
			return nil, herr("tensor %q: shape %v of %s is not a whole number of bytes", name, t.shape, t.dtype)
		}
		nbytes = nbits / 8
	}
	if overflow || nbytes > math.MaxInt {
		return nil, herr("tensor %q: shape %v of %s has more bytes than can be counted", name, t.shape, t.dtype)
	}
	if got := t.end - t.begin; got != nbytes {
		return nil, herr("tensor %q: shape %v of %s is %d bytes, but data_offsets [%d, %d] hold %d", name, t.shape, t.dtype, nbytes, t.begin, t.end, got)
	}
	return t, nil
}

// maxDims is the most dimensions a tensor may have.
const maxDims = 64

// numbers reads a JSON array of numbers (null is not an array).
func numbers(dec *json.Decoder) ([]json.Number, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 || raw[0] != '[' {
		return nil, errors.New("not an array")
	}
	dec2 := json.NewDecoder(bytes.NewReader(raw))
	dec2.UseNumber()
	var vs []any
	if err := dec2.Decode(&vs); err != nil {
		return nil, err
	}
	v := make([]json.Number, len(vs))
	for i, x := range vs {
		n, ok := x.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%v is not a number", x)
		}
		v[i] = n
	}
	return v, nil
}

// unsigned parses a JSON number that must be a non-negative integer.
func unsigned(n json.Number) (uint64, error) {
	v, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a non-negative integer", n)
	}
	return v, nil
}

// formatHeader returns the header of tensors (in file order, offsets set)
// and metadata, compact JSON as the reference writer makes it, padded with
// spaces to a multiple of 8 bytes so the data that follows is aligned.
func formatHeader(list []*tensorInfo, meta map[string]string) []byte {
	var b bytes.Buffer
	str := func(s string) {
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteByte('{')
	if len(meta) > 0 {
		str(metadataKey)
		b.WriteString(":{")
		keys := make([]string, 0, len(meta))
		for k := range meta {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			str(k)
			b.WriteByte(':')
			str(meta[k])
		}
		b.WriteByte('}')
		if len(list) > 0 {
			b.WriteByte(',')
		}
	}
	for i, t := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		str(t.name)
		fmt.Fprintf(&b, `:{"dtype":%q,"shape":[`, t.dtype)
		for j, d := range t.shape {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(d))
		}
		fmt.Fprintf(&b, `],"data_offsets":[%d,%d]}`, t.begin, t.end)
	}
	b.WriteByte('}')
	for b.Len()%8 != 0 {
		b.WriteByte(' ')
	}
	return b.Bytes()
}
