package array

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/internal/strided"
)

// printCase is one array of testdata/print.json (see gen_print.py).
type printCase struct {
	Name    string        `json:"name"`
	DType   string        `json:"dtype"`
	Shape   []int         `json:"shape"`
	Data    []json.Number `json:"data"`
	Formula []int         `json:"formula"`
	Strides []int         `json:"strides"`
	Offset  int           `json:"offset"`
	Repr    string        `json:"repr"`
}

func dtypeNamed(t *testing.T, name string) DType {
	t.Helper()
	for _, d := range DTypes() {
		if d.String() == name {
			return d
		}
	}
	t.Fatalf("unknown dtype %q", name)
	return 0
}

// build makes the case's array over storage holding exactly its bits.
func (c *printCase) build(t *testing.T) *Array {
	t.Helper()
	dt := dtypeNamed(t, c.DType)
	var words []uint64
	for _, n := range c.Data {
		w, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil {
			i, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			w = uint64(i)
		}
		words = append(words, w)
	}
	if c.Formula != nil {
		mul, mod, div := c.Formula[0], c.Formula[1], c.Formula[2]
		n := 1
		for _, d := range c.Shape {
			n *= d
		}
		for i := range n {
			v := float64(i*mul%mod) / float64(div)
			switch dt {
			case Bool:
				words = append(words, map[bool]uint64{false: 0, true: 1}[v == 0])
			case Float16:
				words = append(words, uint64(NewF16(float32(v))))
			case Float32:
				words = append(words, uint64(math.Float32bits(float32(v))))
			case Float64:
				words = append(words, math.Float64bits(v))
			case Complex64:
				// 0 - v, not -v: numpy's v - v*1j has imaginary part +0 at v == 0
				words = append(words, uint64(math.Float32bits(float32(v))), uint64(math.Float32bits(float32(0-v))))
			default:
				words = append(words, uint64(int64(v)))
			}
		}
	}
	size := dt.Size()
	if dt == Complex64 {
		size = 4 // two words per element
	}
	st := AllocCPU(len(words) * size)
	b := st.Bytes()
	for i, w := range words {
		p := unsafe.Pointer(&b[i*size])
		switch size {
		case 1:
			*(*uint8)(p) = uint8(w)
		case 2:
			*(*uint16)(p) = uint16(w)
		case 4:
			*(*uint32)(p) = uint32(w)
		default:
			*(*uint64)(p) = w
		}
	}
	strides := c.Strides
	if strides == nil {
		strides = strided.RowMajor(c.Shape)
	}
	return FromStorage(CurrentStream(), c.Shape, dt, st, strides, c.Offset)
}

func TestStringMatchesNumpy(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "print.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []printCase }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 50 {
		t.Fatalf("print.json has %d cases", len(f.Cases))
	}
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if got := c.build(t).String(); got != c.Repr {
				t.Errorf("got\n%s\nwant (numpy)\n%s", got, c.Repr)
			}
		})
	}
}

// numpy has no bfloat16. These follow the float16 rules with bfloat16's
// 8-bit precision: shortest digits that read back to the same bfloat16.
func TestStringBFloat16(t *testing.T) {
	for _, c := range []struct {
		vals []float32
		want string
	}{
		{[]float32{0.1, 0.2, 3.14}, "array([0.1 , 0.2 , 3.14], dtype=bfloat16)"},
		{[]float32{1, -2.5, 256}, "array([  1. ,  -2.5, 256. ], dtype=bfloat16)"},
		{[]float32{1e-30, 1}, "array([1.e-30, 1.e+00], dtype=bfloat16)"},
		{[]float32{3.3895314e38, float32(math.Inf(-1)), float32(math.NaN())}, "array([3.39e+38,     -inf,      nan], dtype=bfloat16)"},
		{[]float32{1.0078125, 1.015625}, "array([1.01 , 1.016], dtype=bfloat16)"},
	} {
		bs := make([]BF16, len(c.vals))
		for i, v := range c.vals {
			bs[i] = NewBF16(v)
		}
		if got := FromSlice(bs).String(); got != c.want {
			t.Errorf("%v: got\n%s\nwant\n%s", c.vals, got, c.want)
		}
	}
	if got, want := Scalar(NewBF16(0.1)).String(), "array(0.1, dtype=bfloat16)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// The layout rules apply to every dtype; this checks a 2-D uint8 view and
// a pending array (String evaluates it).
func TestStringEvaluates(t *testing.T) {
	x := FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	y := New(CurrentStream(), []int{2, 2}, Float32, viewPrim{}, x)
	want := "array([[1., 2.],\n       [3., 4.]], dtype=float32)"
	if got := y.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !y.Evaluated() {
		t.Error("String did not evaluate the array")
	}
}

func TestStringOfUnevaluableArray(t *testing.T) {
	p := NewPlaceholder(CurrentStream(), []int{2}, Float32)
	got := p.String()
	if !strings.HasPrefix(got, "array(<error: array.Eval: ") || !strings.Contains(got, "placeholder") {
		t.Errorf("got %q", got)
	}
}

// viewPrim makes its output a view of its input.
type viewPrim struct{}

func (viewPrim) Name() string { return "view" }
func (viewPrim) Eval(_ Stream, in, out []*Array) error {
	out[0].SetData(in[0].Storage(), in[0].Strides(), in[0].Offset())
	return nil
}

// TestShortestFloat16MatchesNumpy checks the digits of every positive
// finite float16 against numpy's Dragon4 (testdata/float16_shortest.txt.gz).
func TestShortestFloat16MatchesNumpy(t *testing.T) {
	fh, err := os.Open(filepath.Join("testdata", "float16_shortest.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	z, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(z)
	h := F16(1)
	bad := 0
	for ; sc.Scan(); h++ {
		digits, exp, _ := strings.Cut(sc.Text(), " ")
		e, err := strconv.Atoi(exp)
		if err != nil {
			t.Fatalf("line %d: %v", h, err)
		}
		// the file's exponent is for 0.<digits>
		want := decimal{digits: digits, exp: e - 1}
		if got := shortest(float64(h.Float32()), Float16); got != want && bad < 10 {
			bad++
			t.Errorf("float16 %#04x (%g): got %+v, numpy %+v", uint16(h), h.Float32(), got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if h != 0x7c00 {
		t.Fatalf("file ends at %#04x, want every pattern up to 0x7bff", uint16(h))
	}
}

// numpy has no bfloat16, so this checks the defining properties for every
// positive finite bfloat16: the digits read back to the same value, and no
// decimal with one digit fewer does.
func TestShortestBFloat16RoundTrips(t *testing.T) {
	for b := BF16(1); b < 0x7f80; b++ {
		v := float64(b.Float32())
		d := shortest(v, BFloat16)
		s := d.digits[:1] + "." + d.digits[1:] + "e" + strconv.Itoa(d.exp)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		if back := NewBF16(float32(f)); back != b {
			t.Fatalf("bfloat16 %#04x (%g): %s reads back as %#04x", uint16(b), v, s, uint16(back))
		}
		if p := len(d.digits) - 1; p > 0 {
			for _, q := range []string{strconv.FormatFloat(v, 'e', p-1, 64), strconv.FormatFloat(f, 'e', p-1, 64)} {
				g, _ := strconv.ParseFloat(q, 64)
				if NewBF16(float32(g)) == b {
					t.Fatalf("bfloat16 %#04x (%g): %s is shorter than %s", uint16(b), v, q, s)
				}
			}
		}
	}
}

func TestShapeTuple(t *testing.T) {
	for _, c := range []struct {
		shape []int
		want  string
	}{{[]int{0}, "(0,)"}, {[]int{2, 0}, "(2, 0)"}, {[]int{0, 3, 4}, "(0, 3, 4)"}} {
		if got := shapeTuple(c.shape); got != c.want {
			t.Errorf("shapeTuple(%v) = %q, want %q", c.shape, got, c.want)
		}
	}
}
