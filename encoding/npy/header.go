package npy

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fathom-go/fathom/encoding/internal/tensorio"
)

// magic opens every .npy file.
const magic = "\x93NUMPY"

// MaxHeaderLen is the largest header (the dictionary after the preamble)
// Load accepts. A header of an array of a dtype fathom has is under 1 KiB;
// numpy itself refuses headers above 10000 bytes unless told otherwise.
const MaxHeaderLen = 1 << 20

// maxDims is the most dimensions a file may give (numpy 2's limit).
const maxDims = 64

// header is the parsed dictionary of a .npy file.
type header struct {
	descr   string // as written: "<f4"
	kind    tensorio.Kind
	little  bool
	fortran bool
	shape   []int
	size    int // elements
	nbytes  int
}

// parseHeader parses the dictionary numpy writes with repr():
//
//	{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//
// followed by spaces and a newline. It accepts exactly the three keys,
// each once, in any order, with Python's quoting and optional trailing
// commas; Python 2's long integers ("3L") are accepted in shapes. Any
// other value, a structured dtype, a shape whose size overflows, or
// trailing text is an error, returned as a message.
func parseHeader(text []byte) (header, error) {
	p := &pyParser{s: string(text)}
	var h header
	seen := map[string]bool{}
	p.ws()
	if !p.eat('{') {
		return h, p.errorf("the header is not a dictionary")
	}
	for {
		p.ws()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return h, err
		}
		if seen[key] {
			return h, p.errorf("key %q appears twice", key)
		}
		seen[key] = true
		p.ws()
		if !p.eat(':') {
			return h, p.errorf("expected ':' after key %q", key)
		}
		p.ws()
		switch key {
		case "descr":
			if p.peek() == '[' {
				return h, p.errorf("structured dtypes (a list as descr) are not supported")
			}
			if h.descr, err = p.str(); err != nil {
				return h, err
			}
		case "fortran_order":
			switch {
			case p.word("True"):
				h.fortran = true
			case p.word("False"):
				h.fortran = false
			default:
				return h, p.errorf("fortran_order must be True or False")
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return h, err
			}
		default:
			return h, p.errorf("unexpected key %q (a header has descr, fortran_order and shape)", key)
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		p.ws()
		if !p.eat('}') {
			return h, p.errorf("expected ',' or '}'")
		}
		break
	}
	p.ws()
	if p.i != len(p.s) {
		return h, p.errorf("unexpected text after the dictionary")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("the header has no %q", k)
		}
	}
	if err := h.resolve(); err != nil {
		return h, err
	}
	return h, nil
}

// resolve finds the dtype of h.descr and the size of h.shape.
func (h *header) resolve() error {
	d := h.descr
	little := tensorio.LittleEndian
	if d != "" {
		switch d[0] {
		case '<':
			little, d = true, d[1:]
		case '>':
			little, d = false, d[1:]
		case '|', '=':
			d = d[1:]
		}
	}
	k, ok := tensorio.FromNPY(d)
	if !ok {
		return fmt.Errorf("dtype %q is not one fathom can load (numeric and bool arrays only)", h.descr)
	}
	if !k.Supported() {
		return dtypeError{fmt.Sprintf("%s (numpy %q)", k.UnsupportedMsg(), h.descr)}
	}
	h.kind, h.little = k, little
	n := 1
	for _, dim := range h.shape {
		if dim == 0 {
			n = 0
			break
		}
	}
	if n != 0 {
		for _, dim := range h.shape {
			if n > math.MaxInt/dim {
				return fmt.Errorf("shape %v has too many elements", h.shape)
			}
			n *= dim
		}
	}
	if n > math.MaxInt/k.Size() {
		return fmt.Errorf("shape %v of %s is more bytes than an int can count", h.shape, k.Name)
	}
	h.size, h.nbytes = n, n*k.Size()
	return nil
}

// dtypeError is a header whose dtype fathom does not have yet.
type dtypeError struct{ msg string }

func (e dtypeError) Error() string { return e.msg }

// pyParser reads the Python literals of a header.
type pyParser struct {
	s string
	i int
}

func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf("header at byte %d: "+format, append([]any{p.i}, args...)...)
}

func (p *pyParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *pyParser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) word(w string) bool {
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

// str reads a quoted string without escapes.
func (p *pyParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.errorf("expected a quoted string")
	}
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", p.errorf("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.ContainsAny(v, "\\\n") {
		return "", p.errorf("unexpected escape or newline in string %q", v)
	}
	p.i += end + 2
	return v, nil
}

// tuple reads a tuple of non-negative integers: (), (3,), (2, 3).
func (p *pyParser) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, p.errorf("shape must be a tuple")
	}
	shape := []int{}
	for {
		p.ws()
		if p.eat(')') {
			return shape, nil
		}
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if p.i == start {
			return nil, p.errorf("shape dimensions must be non-negative integers")
		}
		v, err := strconv.ParseUint(p.s[start:p.i], 10, 63)
		if err != nil || v > math.MaxInt {
			return nil, p.errorf("dimension %s is too large", p.s[start:p.i])
		}
		p.eat('L')
		if len(shape) == maxDims {
			return nil, p.errorf("shape has more than %d dimensions", maxDims)
		}
		shape = append(shape, int(v))
		p.ws()
		if p.eat(',') {
			continue
		}
		p.ws()
		if !p.eat(')') {
			return nil, p.errorf("expected ',' or ')' in shape")
		}
		if len(shape) == 1 {
			// (3) is the int 3, not a tuple: numpy writes (3,).
			return nil, p.errorf("shape (%d) is not a tuple (a 1-d shape is written (%d,))", shape[0], shape[0])
		}
		return shape, nil
	}
}

// formatHeader returns the whole preamble numpy writes for an array:
// magic, version, header length, and the dictionary padded with spaces
// and a newline so that the data starts at a multiple of 64 bytes.
func formatHeader(descr string, fortran bool, shape []int) []byte {
	var sh strings.Builder
	sh.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			sh.WriteString(", ")
		}
		sh.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		sh.WriteByte(',')
	}
	sh.WriteByte(')')
	order := "False"
	if fortran {
		order = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, order, sh.String())
	// version 1.0 has a 2-byte length; 2.0 a 4-byte one
	major, lenSize := byte(1), 2
	if len(dict)+1+len(magic)+2+2+64 > math.MaxUint16 {
		major, lenSize = 2, 4
	}
	pre := len(magic) + 2 + lenSize
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	hl := total - pre
	out := make([]byte, 0, total)
	out = append(out, magic...)
	out = append(out, major, 0)
	if lenSize == 2 {
		out = binary.LittleEndian.AppendUint16(out, uint16(hl))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(hl))
	}
	out = append(out, dict...)
	for len(out) < total-1 {
		out = append(out, ' ')
	}
	return append(out, '\n')
}
