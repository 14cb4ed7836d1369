package metal_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/strided"
)

// Cases of the random kernels: Threefry-2x32 bits of every width, the
// uniform and normal distributions and JAX's threefry_2x32 on the GPU
// against backend/cpu's, for one key and batches of keys stored in every
// layout, draws of odd sizes (whose last pair is padded) and narrow
// widths whose parts end inside a word. Bits and uniform draws must agree
// bit for bit; normal draws within the float tolerance (the GPU's float32
// logarithm is not the CPU's). TestRandomKnownAnswers checks the GPU
// against Random123's vectors and JAX's and MLX's values.

func init() { registerFamily("random", randomCases) }

// keyValues draws key words over all of uint32.
func keyValues(r *rand.Rand, _ int) float64 { return float64(r.Uint32()) }

// keyWords returns the words of keys (uint32 [..., 2]) in row-major
// order, as ops gives them to the CPU kernels.
func keyWords(b cpu.Buf) []uint32 {
	n := b.Size()
	data := make([]byte, 4*n)
	dst := cpu.Buf{Data: data, DType: array.Uint32, Shape: b.Shape, Strides: strided.RowMajor(b.Shape)}
	if err := cpu.Copy(dst, b); err != nil {
		panic(err)
	}
	w := make([]uint32, n)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(data[4*i:])
	}
	return w
}

// sameBits compares every element of got and want exactly, as raw bits
// (so -0 differs from 0 and NaNs must agree in payload).
func sameBits(_ int, got, want cpu.Buf) string {
	sz := got.DType.Size()
	n := got.Size()
	for i := range n {
		g := got.Data[(got.Offset+i)*sz : (got.Offset+i+1)*sz]
		w := want.Data[(want.Offset+i)*sz : (want.Offset+i+1)*sz]
		if !slices.Equal(g, w) {
			return fmt.Sprintf("element %d: bits %x, want %x", i, g, w)
		}
	}
	return ""
}

// randomKeyShapes are the keys of the cases: one key, batches of keys
// stored row-major, transposed (the two words of a key apart), sliced,
// and one key broadcast to a batch.
var randomKeyShapes = []struct {
	shape  []int
	layout Layout
}{
	{[]int{2}, Contig},
	{[]int{3, 2}, Contig},
	{[]int{3, 2}, Transposed},
	{[]int{2, 3, 2}, Sliced},
	{[]int{4, 2}, Broadcast},
}

// randomDraws are the shapes drawn for each key: odd and even counts of
// words, more than one threadgroup, and none.
var randomDraws = [][]int{{1}, {2}, {5}, {3, 7}, {1031}, {0}}

func randomCases() []Case {
	var cs []Case
	for _, ks := range randomKeyShapes {
		keys := Op(array.Uint32, ks.shape...).With(ks.layout).Values(keyValues)
		batch := ks.shape[:len(ks.shape)-1]
		for _, d := range randomDraws {
			shape := slices.Concat(batch, d)
			name := fmt.Sprintf("%v/%v/%v", ks.shape, ks.layout, d)
			for _, dt := range []array.DType{array.Uint32, array.Uint16, array.Uint8} {
				cs = append(cs, Case{
					Name:  "Bits/" + dt.String() + "/" + name,
					In:    []Operand{keys},
					Out:   []Operand{Op(dt, shape...)},
					GPU:   func(out, in []metal.View) ([]metal.Launch, error) { return metal.RandomBits(out[0], in[0]) },
					CPU:   func(out, in []cpu.Buf) error { return randomCPU(out[0], in[0], cpu.RandomBits) },
					Check: sameBits,
				})
			}
			for _, dt := range floatDTypes {
				for _, p := range [][2]float64{{0, 1}, {-3, 5.5}, {0.25, 0.5}} {
					cs = append(cs, Case{
						Name: fmt.Sprintf("Uniform/%v/%v/%s", dt, p, name),
						In:   []Operand{keys},
						Out:  []Operand{Op(dt, shape...)},
						GPU: func(out, in []metal.View) ([]metal.Launch, error) {
							return metal.RandomFloats(out[0], in[0], metal.RandUniform, p[0], p[1])
						},
						CPU: func(out, in []cpu.Buf) error {
							return randomCPU(out[0], in[0], func(o cpu.Buf, k []uint32) error {
								return cpu.RandomFloats(o, k, cpu.RandUniform, p[0], p[1])
							})
						},
						Check: sameBits,
					})
				}
				for _, p := range [][2]float64{{0, 1}, {-2, 3.5}, {1.5, -0.25}} {
					cs = append(cs, Case{
						Name: fmt.Sprintf("Normal/%v/%v/%s", dt, p, name),
						In:   []Operand{keys},
						Out:  []Operand{Op(dt, shape...)},
						GPU: func(out, in []metal.View) ([]metal.Launch, error) {
							return metal.RandomFloats(out[0], in[0], metal.RandNormal, p[0], p[1])
						},
						CPU: func(out, in []cpu.Buf) error {
							return randomCPU(out[0], in[0], func(o cpu.Buf, k []uint32) error {
								return cpu.RandomFloats(o, k, cpu.RandNormal, p[0], p[1])
							})
						},
						// the tails of erfinv magnify the logarithm's
						// last bits
						Tol: 4,
					})
				}
			}
		}
	}
	for _, key := range []Operand{Op(array.Uint32, 2).Values(keyValues), Op(array.Uint32, 2).With(Sliced).Values(keyValues)} {
		for _, c := range []Operand{
			Op(array.Uint32, 1), Op(array.Uint32, 2), Op(array.Uint32, 7), Op(array.Uint32, 4, 5).With(Transposed),
			Op(array.Uint32, 1031).With(Sliced), Op(array.Uint32, 3, 4).With(Broadcast), Op(array.Uint32, 0),
		} {
			c = c.Values(keyValues)
			cs = append(cs, Case{
				Name:  fmt.Sprintf("Threefry2x32/key %v/counts %v %v", key.Layout, c.Shape, c.Layout),
				In:    []Operand{key, c},
				Out:   []Operand{Op(array.Uint32, c.Shape...)},
				GPU:   func(out, in []metal.View) ([]metal.Launch, error) { return metal.Threefry2x32(out[0], in[0], in[1]) },
				CPU:   func(out, in []cpu.Buf) error { return threefryCountsCPU(out[0], in[0], in[1]) },
				Check: sameBits,
			})
		}
	}
	k := Op(array.Uint32, 2)
	bits := func(out, in []metal.View) ([]metal.Launch, error) { return metal.RandomBits(out[0], in[0]) }
	uniform := func(out, in []metal.View) ([]metal.Launch, error) {
		return metal.RandomFloats(out[0], in[0], metal.RandUniform, 0, 1)
	}
	for _, e := range []struct {
		name     string
		in, out  Operand
		gpu      func(out, in []metal.View) ([]metal.Launch, error)
		contains string
	}{
		{"float64", k, Op(array.Float64, 4), uniform, "float64 is not supported on the GPU"},
		{"int32 out", k, Op(array.Int32, 4), uniform, "int32 is not a float dtype"},
		{"float bits", k, Op(array.Float32, 4), bits, "want uint32, uint16 or uint8"},
		{"int32 keys", Op(array.Int32, 2), Op(array.Uint32, 4), bits, "want uint32 [..., 2]"},
		{"key shape", Op(array.Uint32, 3), Op(array.Uint32, 4), bits, "shape [3]"},
		{"transposed out", k, Op(array.Uint32, 3, 4).With(Transposed), bits, "is not row-major"},
		{"uneven parts", Op(array.Uint32, 3, 2), Op(array.Uint32, 4), bits, "4 elements do not split over 3 keys"},
	} {
		cs = append(cs, Case{Name: "error/" + e.name, In: []Operand{e.in}, Out: []Operand{e.out}, GPU: e.gpu, WantErr: e.contains})
	}
	cs = append(cs, Case{
		Name: "error/threefry key", In: []Operand{Op(array.Uint32, 2, 2), Op(array.Uint32, 4)}, Out: []Operand{Op(array.Uint32, 4)},
		GPU:     func(out, in []metal.View) ([]metal.Launch, error) { return metal.Threefry2x32(out[0], in[0], in[1]) },
		WantErr: "key of shape [2 2], want [2]",
	})
	return cs
}

// randomCPU runs a CPU random kernel on the words of keys, as ops does:
// an empty output needs no kernel.
func randomCPU(out, keys cpu.Buf, f func(cpu.Buf, []uint32) error) error {
	if out.Size() == 0 {
		return nil
	}
	return f(out, keyWords(keys))
}

// threefryCountsCPU is ops' CPU Threefry2x32 of counts: the flattened
// halves of the counts are the blocks' two words.
func threefryCountsCPU(out, key, counts cpu.Buf) error {
	k := keyWords(key)
	c := keyWords(counts)
	n := len(c)
	h := (n + 1) / 2
	res := make([]uint32, 2*h)
	for i := range h {
		var x1 uint32
		if h+i < n {
			x1 = c[h+i]
		}
		res[i], res[h+i] = cpu.Threefry2x32(k[0], k[1], c[i], x1)
	}
	for i, w := range res[:n] {
		binary.LittleEndian.PutUint32(out.Data[4*(out.Offset+i):], w)
	}
	return nil
}

// threefryReference is the part of random/testdata/threefry.json (written
// by random/testdata/gen_threefry.py) these tests use: Random123's
// known-answer vectors for Threefry-2x32-20, and JAX's random_bits.
type threefryReference struct {
	KAT []struct {
		Counts, Key, Want []uint32
	} `json:"kat"`
	Bits []struct {
		Seed  uint64
		Shape []int
		Width int
		Want  []uint64
	} `json:"bits"`
}

// fixed returns a generator of the given values, in order.
func fixed[T uint32 | uint64](v []T) func(*rand.Rand, int) float64 {
	return func(_ *rand.Rand, i int) float64 { return float64(v[i]) }
}

// expectBits returns a Check that wants the elements of output 0 (an
// unsigned dtype) to be want, and the CPU's.
func expectBits(want []uint64) func(k int, got, cpuOut cpu.Buf) string {
	return func(k int, got, cpuOut cpu.Buf) string {
		if msg := sameBits(k, got, cpuOut); msg != "" {
			return "GPU and CPU differ: " + msg
		}
		sz := got.DType.Size()
		for i, w := range want {
			var b [8]byte
			copy(b[:], got.Data[(got.Offset+i)*sz:(got.Offset+i+1)*sz])
			if g := binary.LittleEndian.Uint64(b[:]); g != w {
				return fmt.Sprintf("element %d = %d, want %d", i, g, w)
			}
		}
		return ""
	}
}

// TestRandomKnownAnswers runs Random123's Threefry-2x32-20 vectors
// through the GPU's threefry2x32_counts, and JAX's and MLX's bits
// (issue 17's two values and the reference file's) through its bits
// kernels, on the harness.
func TestRandomKnownAnswers(t *testing.T) {
	requireHarness(t)
	b, err := os.ReadFile("../../random/testdata/threefry.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref threefryReference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.KAT) < 3 || len(ref.Bits) < 6 {
		t.Fatalf("%d known-answer vectors and %d bits cases in the reference", len(ref.KAT), len(ref.Bits))
	}
	for _, c := range ref.KAT {
		want := make([]uint64, len(c.Want))
		for i, w := range c.Want {
			want[i] = uint64(w)
		}
		runCase(t, Case{
			Name:  fmt.Sprintf("Random123 key %x counts %x", c.Key, c.Counts),
			In:    []Operand{Op(array.Uint32, 2).Values(fixed(c.Key)), Op(array.Uint32, len(c.Counts)).Values(fixed(c.Counts))},
			Out:   []Operand{Op(array.Uint32, len(c.Counts))},
			GPU:   func(out, in []metal.View) ([]metal.Launch, error) { return metal.Threefry2x32(out[0], in[0], in[1]) },
			CPU:   func(out, in []cpu.Buf) error { return threefryCountsCPU(out[0], in[0], in[1]) },
			Check: expectBits(want),
		})
	}
	type bitsCase struct {
		seed  uint64
		shape []int
		width int
		want  []uint64
	}
	cases := []bitsCase{
		// issue 17, from JAX and MLX: Split(Key(0)) and Bits(Key(0), [3 1], 4)
		{0, []int{2, 2}, 4, []uint64{4146024105, 967050713, 2718843009, 1272950319}},
		{0, []int{3, 1}, 4, []uint64{4146024105, 1351547692, 2718843009}},
	}
	for _, c := range ref.Bits {
		cases = append(cases, bitsCase{c.Seed, c.Shape, c.Width, c.Want})
	}
	dts := map[int]array.DType{4: array.Uint32, 2: array.Uint16, 1: array.Uint8}
	for _, c := range cases {
		key := []uint32{uint32(c.seed >> 32), uint32(c.seed)}
		runCase(t, Case{
			Name:  fmt.Sprintf("Bits(Key(%d), %v, %d)", c.seed, c.shape, c.width),
			In:    []Operand{Op(array.Uint32, 2).Values(fixed(key))},
			Out:   []Operand{Op(dts[c.width], c.shape...)},
			GPU:   func(out, in []metal.View) ([]metal.Launch, error) { return metal.RandomBits(out[0], in[0]) },
			CPU:   func(out, in []cpu.Buf) error { return randomCPU(out[0], in[0], cpu.RandomBits) },
			Check: expectBits(c.want),
		})
	}
}

// TestRandomUniformBelowHigh: uniform draws from the words closest to
// 2^32, where u rounds up towards 1, stay below high on the GPU in every
// float dtype (as on the CPU), also for intervals where (high-low)*u +
// low rounds up to high.
func TestRandomUniformBelowHigh(t *testing.T) {
	requireHarness(t)
	// Threefry of these keys is not steerable, so the words are the
	// kernel's own: check the bound over many of them, and the mapping
	// of the largest words through the CPU's equality.
	for _, dt := range floatDTypes {
		for _, p := range [][2]float64{{0, 1}, {1, 1.0078125}, {-1, 65504}} {
			runCase(t, Case{
				Name: fmt.Sprintf("bound %v %v", dt, p),
				In:   []Operand{Op(array.Uint32, 8, 2).Values(keyValues)},
				Out:  []Operand{Op(dt, 8, 4096)},
				GPU: func(out, in []metal.View) ([]metal.Launch, error) {
					return metal.RandomFloats(out[0], in[0], metal.RandUniform, p[0], p[1])
				},
				CPU: func(out, in []cpu.Buf) error {
					return randomCPU(out[0], in[0], func(o cpu.Buf, k []uint32) error {
						return cpu.RandomFloats(o, k, cpu.RandUniform, p[0], p[1])
					})
				},
				Check: func(k int, got, want cpu.Buf) string {
					if msg := sameBits(k, got, want); msg != "" {
						return msg
					}
					for i := range got.Size() {
						v, _ := elemAt(got.Data, got.DType, got.Offset+i)
						if x := real(v); !(x >= roundTo(p[0], dt) && x < roundTo(p[1], dt)) {
							return fmt.Sprintf("element %d = %v, outside [%v, %v)", i, x, p[0], p[1])
						}
					}
					return ""
				},
			})
		}
	}
}

// roundTo rounds v to dtype dt (a float dtype).
func roundTo(v float64, dt array.DType) float64 {
	switch dt {
	case array.Float16:
		return float64(array.NewF16(float32(v)).Float32())
	case array.BFloat16:
		return float64(array.NewBF16(float32(v)).Float32())
	}
	return float64(float32(v))
}

// TestRandomTwoDimensionalGrid runs the random kernels with more pairs
// than the largest grid dimension (lowered here), so that their grids
// are two-dimensional and the last row is cut short.
func TestRandomTwoDimensionalGrid(t *testing.T) {
	requireHarness(t)
	defer metal.SetMaxGridDim(1000)()
	keys := Op(array.Uint32, 3, 2).Values(keyValues)
	for _, c := range []Case{{
		Name:  "Bits uint8 [3 5001]",
		In:    []Operand{keys},
		Out:   []Operand{Op(array.Uint8, 3, 5001)},
		GPU:   func(out, in []metal.View) ([]metal.Launch, error) { return metal.RandomBits(out[0], in[0]) },
		CPU:   func(out, in []cpu.Buf) error { return randomCPU(out[0], in[0], cpu.RandomBits) },
		Check: sameBits,
	}, {
		Name: "Uniform float32 [3 1201]",
		In:   []Operand{keys},
		Out:  []Operand{Op(array.Float32, 3, 1201)},
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			return metal.RandomFloats(out[0], in[0], metal.RandUniform, -1, 1)
		},
		CPU: func(out, in []cpu.Buf) error {
			return randomCPU(out[0], in[0], func(o cpu.Buf, k []uint32) error {
				return cpu.RandomFloats(o, k, cpu.RandUniform, -1, 1)
			})
		},
		Check: sameBits,
	}, {
		Name:  "Threefry2x32 [2501]",
		In:    []Operand{Op(array.Uint32, 2).Values(keyValues), Op(array.Uint32, 2501).Values(keyValues)},
		Out:   []Operand{Op(array.Uint32, 2501)},
		GPU:   func(out, in []metal.View) ([]metal.Launch, error) { return metal.Threefry2x32(out[0], in[0], in[1]) },
		CPU:   func(out, in []cpu.Buf) error { return threefryCountsCPU(out[0], in[0], in[1]) },
		Check: sameBits,
	}} {
		r := rand.New(rand.NewSource(1))
		_, in := materializeAll(r, c.In, false)
		_, out := materializeAll(r, c.Out, true)
		ls, err := c.GPU(views(out), views(in))
		if err != nil || len(ls) != 1 || ls[0].Grid[1] < 2 {
			t.Fatalf("%s: plan %v (%v), want one launch with a 2-D grid", c.Name, ls, err)
		}
		runCase(t, c)
	}
}
