package random_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// reference is testdata/threefry.json, written by gen_threefry.py: a
// numpy transcription of JAX's threefry PRNG that the script checks
// against Random123's known-answer vectors and the two JAX/MLX values
// quoted in issue 17 before it writes anything.
type reference struct {
	KAT []struct {
		Counts, Key, Want []uint32
	} `json:"kat"`
	Split []struct {
		Seed uint64
		N    int
		Want []uint32
	} `json:"split"`
	Bits []struct {
		Seed  uint64
		Shape []int
		Width int
		Want  []uint64
	} `json:"bits"`
	Vmap struct {
		Keys  []uint32
		Shape []int
		Width int
		Want  [][]uint32
	} `json:"vmap"`
	Uniform []struct {
		Seed      uint64
		Shape     []int
		Low, High float64
		DType     string
		Want      []float64
	} `json:"uniform"`
	Threefry []struct {
		Seed   uint64
		Counts []uint32
		Want   []uint32
	} `json:"threefry"`
}

func loadRef(t *testing.T) reference {
	t.Helper()
	b, err := os.ReadFile("testdata/threefry.json")
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func u32s(t *testing.T, a *array.Array) []uint32 {
	t.Helper()
	s, err := array.ToSlice[uint32](a)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bitsAsU64 reads an array of any unsigned dtype as uint64s.
func bitsAsU64(t *testing.T, a *array.Array) []uint64 {
	t.Helper()
	s, err := array.ToSlice[uint64](ops.AsType(a, array.Uint64))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func floats(t *testing.T, a *array.Array) []float64 {
	t.Helper()
	s, err := array.ToSlice[float64](ops.AsType(a, array.Float64))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKnownAnswers checks the two JAX/MLX values, Random123's
// vectors, and the reference script's split, bits, vmap, uniform and
// threefry_2x32 values.
func TestKnownAnswers(t *testing.T) {
	// issue 17, from JAX and MLX
	if got := u32s(t, random.Split(random.Key(0), 2)); !slices.Equal(got, []uint32{4146024105, 967050713, 2718843009, 1272950319}) {
		t.Errorf("Split(Key(0)) = %v", got)
	}
	if got := u32s(t, random.Bits(random.Key(0), []int{3, 1}, 4)); !slices.Equal(got, []uint32{4146024105, 1351547692, 2718843009}) {
		t.Errorf("Bits(Key(0), [3 1], 4) = %v", got)
	}
	r := loadRef(t)
	for _, c := range r.KAT {
		got := u32s(t, random.Threefry2x32(array.FromSlice(c.Key), array.FromSlice(c.Counts)))
		if !slices.Equal(got, c.Want) {
			t.Errorf("Threefry2x32(key %x, counts %x) = %x, want %x (Random123)", c.Key, c.Counts, got, c.Want)
		}
	}
	for _, c := range r.Split {
		if got := u32s(t, random.Split(random.Key(c.Seed), c.N)); !slices.Equal(got, c.Want) {
			t.Errorf("Split(Key(%d), %d) = %v, want %v", c.Seed, c.N, got, c.Want)
		}
	}
	for _, c := range r.Bits {
		b := random.Bits(random.Key(c.Seed), c.Shape, c.Width)
		if !slices.Equal(b.Shape(), c.Shape) || b.DType().Size() != c.Width {
			t.Errorf("Bits(%d, %v, %d): %v %v", c.Seed, c.Shape, c.Width, b.DType(), b.Shape())
		}
		if got := bitsAsU64(t, b); !slices.Equal(got, c.Want) && len(c.Want) > 0 {
			t.Errorf("Bits(Key(%d), %v, %d) = %v, want %v", c.Seed, c.Shape, c.Width, got, c.Want)
		}
	}
	for _, c := range r.Threefry {
		if got := u32s(t, random.Threefry2x32(random.Key(c.Seed), array.FromSlice(c.Counts))); !slices.Equal(got, c.Want) {
			t.Errorf("Threefry2x32(Key(%d), %v) = %v, want %v", c.Seed, c.Counts, got, c.Want)
		}
	}
	for _, c := range r.Uniform {
		dt := array.Float32
		if c.DType == "float16" {
			dt = array.Float16
		}
		got := floats(t, random.Uniform(random.Key(c.Seed), c.Low, c.High, c.Shape, dt))
		if !slices.Equal(got, c.Want) {
			t.Errorf("Uniform(Key(%d), %v, %v, %v, %v) = %v, want %v", c.Seed, c.Low, c.High, c.Shape, dt, got, c.Want)
		}
	}
	// Vmap over a batch of keys gives each key's own bits
	keys := array.FromSlice(r.Vmap.Keys, len(r.Vmap.Keys)/2, 2)
	f := graph.Vmap(func(in ...*array.Array) []*array.Array {
		return []*array.Array{random.Bits(in[0], r.Vmap.Shape, r.Vmap.Width)}
	}, nil, nil)
	out := f(keys)[0]
	got := u32s(t, out)
	want := slices.Concat(r.Vmap.Want...)
	if !slices.Equal(out.Shape(), []int{3, 4}) || !slices.Equal(got, want) {
		t.Errorf("Vmap(Bits) over keys = %v %v, want %v", out.Shape(), got, want)
	}
	// and Vmap of Uniform gives each key's Uniform
	fu := graph.Vmap(func(in ...*array.Array) []*array.Array {
		return []*array.Array{random.Uniform(in[0], -1, 1, []int{5}, array.Float32)}
	}, nil, nil)
	ub := floats(t, fu(keys)[0])
	for i := range 3 {
		k := array.FromSlice(r.Vmap.Keys[2*i : 2*i+2])
		if one := floats(t, random.Uniform(k, -1, 1, []int{5}, array.Float32)); !slices.Equal(one, ub[5*i:5*i+5]) {
			t.Errorf("Vmap(Uniform) key %d = %v, want %v", i, ub[5*i:5*i+5], one)
		}
	}
}

// TestDeterminism draws the same numbers for every GOMAXPROCS from 1 to
// 8, eagerly and compiled.
func TestDeterminism(t *testing.T) {
	const n = 1<<18 + 3 // several parallel chunks, odd
	draw := func(key *array.Array) []*array.Array {
		return []*array.Array{
			random.Bits(key, []int{n}, 4), random.Bits(key, []int{n}, 1),
			random.Uniform(key, 0, 1, []int{n}, array.Float32),
			random.Normal(key, []int{n}, array.Float16, 0, 1),
		}
	}
	cf := compile.Compile(func(in ...*array.Array) []*array.Array { return draw(in[0]) })
	defer cf.Release()
	var want [][]uint64
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs := 1; procs <= 8; procs++ {
		runtime.GOMAXPROCS(procs)
		for mode, outs := range [][]*array.Array{draw(random.Key(77)), cf.Call(random.Key(77))} {
			var got [][]uint64
			for _, o := range outs {
				got = append(got, bitsOf(t, o))
			}
			if want == nil {
				want = got
				continue
			}
			for i := range got {
				if !slices.Equal(got[i], want[i]) {
					t.Errorf("GOMAXPROCS %d, compiled %v: output %d differs", procs, mode == 1, i)
				}
			}
		}
	}
}

// bitsOf returns any array's elements as bits: floats widen to float64
// exactly.
func bitsOf(t *testing.T, a *array.Array) []uint64 {
	t.Helper()
	if a.DType().IsFloat() {
		f := floats(t, a)
		out := make([]uint64, len(f))
		for i, v := range f {
			out[i] = math.Float64bits(v)
		}
		return out
	}
	return bitsAsU64(t, a)
}

// ks returns the Kolmogorov–Smirnov statistic of xs against cdf.
func ks(xs []float64, cdf func(float64) float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := float64(len(s))
	d := 0.0
	for i, x := range s {
		f := cdf(x)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
	}
	return d
}

func moments(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs))
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// TestDistributions checks moments and a Kolmogorov–Smirnov statistic at
// fixed keys (so never flaky): with n = 100000 the 0.1% critical value
// is 1.95/sqrt(n) = 0.0062.
func TestDistributions(t *testing.T) {
	const n = 100000
	crit := 1.95 / math.Sqrt(n)
	cases := []struct {
		name      string
		draw      *array.Array
		mean, vr  float64
		cdf       func(float64) float64
		tolM, tol float64
	}{
		{"Uniform", random.Uniform(random.Key(1), -2, 3, []int{n}, array.Float32), 0.5, 25.0 / 12,
			func(x float64) float64 { return min(max((x+2)/5, 0), 1) }, 0.02, 0.05},
		{"Uniform/float64", random.Uniform(random.Key(11), 0, 1, []int{n}, array.Float64), 0.5, 1.0 / 12,
			func(x float64) float64 { return min(max(x, 0), 1) }, 0.005, 0.003},
		{"Normal", random.Normal(random.Key(2), []int{n}, array.Float32, 1, 2), 1, 4,
			func(x float64) float64 { return normCDF((x - 1) / 2) }, 0.02, 0.06},
		{"Normal/bfloat16", random.Normal(random.Key(12), []int{n}, array.BFloat16, 0, 1), 0, 1, nil, 0.01, 0.02},
		{"TruncatedNormal", random.TruncatedNormal(random.Key(3), -1, 2, []int{n}, array.Float32), 0.2296, 0.5198, // (φ(a)-φ(b))/Z and 1+(aφ(a)-bφ(b))/Z-mean²
			func(x float64) float64 {
				a, b := normCDF(-1), normCDF(2)
				return min(max((normCDF(x)-a)/(b-a), 0), 1)
			}, 0.01, 0.01},
		{"Gumbel", random.Gumbel(random.Key(4), []int{n}, array.Float32), 0.5772157, math.Pi * math.Pi / 6,
			func(x float64) float64 { return math.Exp(-math.Exp(-x)) }, 0.02, 0.05},
		{"Laplace", random.Laplace(random.Key(5), []int{n}, array.Float32, 1, 0.5), 1, 0.5,
			func(x float64) float64 {
				if x < 1 {
					return 0.5 * math.Exp((x-1)/0.5)
				}
				return 1 - 0.5*math.Exp(-(x-1)/0.5)
			}, 0.01, 0.02},
		{"Bernoulli", ops.AsType(random.Bernoulli(random.Key(6), 0.3, []int{n}), array.Float32), 0.3, 0.21, nil, 0.005, 0.005},
		{"RandInt", random.RandInt(random.Key(7), -3, 5, []int{n}, array.Int8), 0.5, 63.0 / 12, nil, 0.03, 0.05},
		{"RandInt/int64", random.RandInt(random.Key(8), 10, 20, []int{n}, array.Int64), 14.5, 99.0 / 12, nil, 0.03, 0.05},
		{"RandInt/uint64", random.RandInt(random.Key(9), 0, 1<<40, []int{n}, array.Uint64), (1<<40 - 1) / 2.0, 0, nil, 0.01 * (1 << 40), 0},
	}
	for _, c := range cases {
		xs := floats(t, c.draw)
		m, v := moments(xs)
		if math.Abs(m-c.mean) > c.tolM || (c.vr != 0 && math.Abs(v-c.vr) > c.tol) {
			t.Errorf("%s: mean %.4f variance %.4f, want %.4f %.4f", c.name, m, v, c.mean, c.vr)
		}
		if c.cdf != nil {
			if d := ks(xs, c.cdf); d > crit {
				t.Errorf("%s: Kolmogorov–Smirnov statistic %.5f > %.5f", c.name, d, crit)
			}
		}
	}
	// RandInt covers its interval and nothing else
	xs := floats(t, random.RandInt(random.Key(7), -3, 5, []int{n}, array.Int8))
	seen := map[float64]int{}
	for _, x := range xs {
		seen[x]++
	}
	if len(seen) != 8 || seen[-3] == 0 || seen[4] == 0 || seen[5] != 0 {
		t.Errorf("RandInt(-3, 5) values %v", seen)
	}
	// Categorical follows softmax(logits)
	logits := array.FromSlice([]float32{0, 1, 2, -1})
	cs := floats(t, random.CategoricalN(random.Key(10), logits, 0, n))
	cnt := make([]float64, 4)
	for _, c := range cs {
		cnt[int(c)]++
	}
	z := 1 + math.E + math.E*math.E + 1/math.E
	for i, l := range []float64{0, 1, 2, -1} {
		if p := math.Exp(l) / z; math.Abs(cnt[i]/n-p) > 0.006 {
			t.Errorf("Categorical: category %d frequency %.4f, want %.4f", i, cnt[i]/n, p)
		}
	}
	// Permutation is a permutation
	p := floats(t, random.Permutation(random.Key(3), 1000))
	ps := slices.Clone(p)
	slices.Sort(ps)
	for i, v := range ps {
		if v != float64(i) {
			t.Fatalf("Permutation is not a permutation: %v", p[:10])
		}
	}
	if slices.IsSorted(p) {
		t.Error("Permutation(1000) is the identity")
	}
}

// TestUniformBounds: Uniform never returns high, also where float16 and
// bfloat16 would round up to it, and its smallest and largest words map
// inside [low, high).
func TestUniformBounds(t *testing.T) {
	for _, dt := range []array.DType{array.Float16, array.BFloat16, array.Float32, array.Float64} {
		// [2, 3) and [-1, 1000): (high-low)*u + low rounds up to high for
		// the largest u in every 16- and 32-bit float dtype
		for _, b := range [][2]float64{{0, 1}, {2, 3}, {-1, 1000}} {
			xs := floats(t, random.Uniform(random.Key(31), b[0], b[1], []int{1 << 20}, dt))
			lo, hi := slices.Min(xs), slices.Max(xs)
			if lo < b[0] || hi >= b[1] {
				t.Errorf("Uniform %v [%v, %v): range [%v, %v]", dt, b[0], b[1], lo, hi)
			}
		}
	}
}

// TestBadArguments: each bad argument is an *array.Error naming the
// function.
func TestBadArguments(t *testing.T) {
	k := random.Key(0)
	f32 := array.FromSlice([]float32{1, 2})
	cases := []struct {
		name string
		f    func()
	}{
		{"key dtype", func() { random.Bits(array.FromSlice([]int32{1, 2}), []int{2}, 4) }},
		{"key shape", func() { random.Bits(array.FromSlice([]uint32{1, 2, 3}), []int{2}, 4) }},
		{"key 2-D", func() { random.Uniform(array.FromSlice([]uint32{1, 2}, 1, 2), 0, 1, nil, array.Float32) }},
		{"width", func() { random.Bits(k, []int{2}, 3) }},
		{"negative shape", func() { random.Bits(k, []int{-1}, 4) }},
		{"negative split", func() { random.Split(k, -2) }},
		{"uniform int dtype", func() { random.Uniform(k, 0, 1, []int{2}, array.Int32) }},
		{"uniform empty", func() { random.Uniform(k, 1, 1, []int{2}, array.Float32) }},
		{"uniform reversed", func() { random.Uniform(k, 2, 1, []int{2}, array.Float32) }},
		{"uniform NaN", func() { random.Uniform(k, math.NaN(), 1, []int{2}, array.Float32) }},
		{"normal complex", func() { random.Normal(k, []int{2}, array.Complex64, 0, 1) }},
		{"truncated empty", func() { random.TruncatedNormal(k, 1, -1, []int{2}, array.Float32) }},
		{"randint float", func() { random.RandInt(k, 0, 5, []int{2}, array.Float32) }},
		{"randint empty", func() { random.RandInt(k, 5, 5, []int{2}, array.Int32) }},
		{"randint range", func() { random.RandInt(k, 0, 300, []int{2}, array.Uint8) }},
		{"bernoulli NaN", func() { random.Bernoulli(k, math.NaN(), []int{2}) }},
		{"bernoulli int p", func() { random.BernoulliArray(k, array.FromSlice([]int32{1}), []int{2}) }},
		{"param shape", func() { random.UniformArray(k, f32, f32, []int{3}, array.Float32) }},
		{"nil param", func() { random.NormalArray(k, []int{2}, array.Float32, nil, f32) }},
		{"categorical axis", func() { random.Categorical(k, f32, 1) }},
		{"categorical int", func() { random.Categorical(k, array.FromSlice([]int32{1}), 0) }},
		{"categorical samples", func() { random.CategoricalN(k, f32, 0, -1) }},
		{"permutation", func() { random.Permutation(k, -1) }},
		{"permutation axis", func() { random.PermutationOf(k, f32, 2) }},
		{"threefry counts", func() { random.Threefry2x32(k, f32) }},
	}
	for _, c := range cases {
		err := array.Try(c.f)
		var ae *array.Error
		if !errors.As(err, &ae) {
			t.Errorf("%s: got %v, want *array.Error", c.name, err)
		}
	}
}

// TestGlobalKey: nil keys draw from the global key, which Seed resets,
// and concurrent draws are safe and all distinct.
func TestGlobalKey(t *testing.T) {
	random.Seed(5)
	a := floats(t, random.Uniform(nil, 0, 1, []int{4}, array.Float32))
	b := floats(t, random.Uniform(nil, 0, 1, []int{4}, array.Float32))
	random.Seed(5)
	a2 := floats(t, random.Uniform(nil, 0, 1, []int{4}, array.Float32))
	if !slices.Equal(a, a2) || slices.Equal(a, b) {
		t.Errorf("Seed(5): %v then %v, again %v", a, b, a2)
	}
	// the first draw after Seed(5) is the draw of the second half of Split(Key(5))
	k := ops.Reshape(ops.SliceAxis(random.Split(random.Key(5), 2), 0, ops.R(1, 2)), 2)
	if want := floats(t, random.Uniform(k, 0, 1, []int{4}, array.Float32)); !slices.Equal(a, want) {
		t.Errorf("first global draw %v, want %v", a, want)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]bool{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				v := fmt.Sprint(u32s(t, random.Bits(nil, []int{2}, 4)))
				mu.Lock()
				seen[v] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 80 {
		t.Errorf("80 concurrent global draws gave %d distinct values", len(seen))
	}
}

// TestGradients: UniformArray and NormalArray are differentiable in their
// parameters (checked against central differences); the draws themselves
// are constants.
func TestGradients(t *testing.T) {
	k := random.Key(21)
	shape := []int{6}
	loss := func(f func(a, b *array.Array) *array.Array) func(in ...*array.Array) *array.Array {
		return func(in ...*array.Array) *array.Array {
			y := f(in[0], in[1])
			return ops.Sum(ops.Mul(y, y))
		}
	}
	fs := map[string]func(a, b *array.Array) *array.Array{
		"UniformArray": func(a, b *array.Array) *array.Array { return random.UniformArray(k, a, b, shape, array.Float64) },
		"NormalArray":  func(a, b *array.Array) *array.Array { return random.NormalArray(k, shape, array.Float64, a, b) },
	}
	for name, f := range fs {
		l := loss(f)
		a, b := array.FromSlice([]float64{-0.5}), array.FromSlice([]float64{1.5, 2, 2.5, 3, 3.5, 4})
		g := graph.Grad(l, 0, 1)(a, b)
		for i, x := range []*array.Array{a, b} {
			got := floats(t, g[i])
			xs := floats(t, x)
			for j := range xs {
				const h = 1e-6
				at := func(d float64) float64 {
					v := slices.Clone(xs)
					v[j] += d
					in := []*array.Array{a, b}
					in[i] = array.FromSlice(v, x.Shape()...)
					return l(in...).Item()
				}
				fd := (at(h) - at(-h)) / (2 * h)
				if math.Abs(fd-got[j]) > 1e-5*max(1, math.Abs(fd)) {
					t.Errorf("%s: d/d input %d [%d] = %v, finite difference %v", name, i, j, got[j], fd)
				}
			}
		}
	}
	// the derivative through a plain draw is zero (a constant)
	g := graph.Grad(func(in ...*array.Array) *array.Array {
		return ops.Sum(ops.Mul(in[0], random.Normal(k, []int{3}, array.Float32, 0, 1)))
	}, 0)(array.FromSlice([]float32{1, 2, 3}))
	if got := floats(t, g[0]); len(got) != 3 || got[0] == 0 {
		t.Errorf("gradient of x*z: %v", got)
	}
}
