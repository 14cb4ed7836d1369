package metal_test

// The conformance suite: every case runs a Metal plan on the MSL-on-CPU
// harness (internal/mslcpu) and the matching backend/cpu kernel on the same
// inputs, and compares the results (exactly for integers and bools, within
// a per-dtype tolerance for floats). Each case runs under two thread
// schedules (forward and reverse; add shuffle with MSL_SCHEDULE=shuffle) so
// that a missing barrier cannot hide. TestEveryKernelHasACase fails if a
// kernel of kernels/*.metal is planned by no case.
//
// Adding a kernel family (conformance_<family>_test.go):
//
//	func init() { registerFamily("exp", expCases) }
//
//	func expCases() []Case {
//		var cs []Case
//		for _, dt := range floatDTypes {
//			cs = append(cs, Case{
//				Name: "Exp/" + dt.String(),
//				In:   []Operand{Op(dt, OddShape...).With(Transposed)},
//				Out:  []Operand{Op(dt, OddShape...)},
//				GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return metal.Unary(opset.Exp, out[0], in[0]) },
//				CPU:  func(out, in []cpu.Buf) error { return cpu.Unary(opset.Exp, out[0], in[0]) },
//			})
//		}
//		return cs
//	}
//
// Helpers:
//   - Op(dt, shape...) is an Operand; .With(layout) stores it Transposed,
//     Sliced (every other element, last axis reversed, an offset), Broadcast
//     (stride 0 on axis 0), or as a Scalar (every stride 0); .Values(gen)
//     draws its values from gen instead of the dtype's default mix (which
//     includes 0, -0, ±1, NaN and ±Inf for floats, extremes for integers).
//     Outputs may use Contig, Transposed or Sliced: they start filled with
//     garbage bytes, and elements outside the view must come back untouched.
//     Inputs must come back unmodified.
//   - Case.Tol scales the default tolerance (floats: |got-want| <=
//     Tol*(atol + rtol*|want|), atol and rtol per dtype, see tolerance;
//     integers and bools are exact); Case.Check(k, got, want) replaces the
//     element comparison of output k (e.g. for ties of a sort); Case.WantErr
//     expects the plan to fail with an error containing it.
//   - Shapes whose sizes do not divide the threadgroup sizes: OddShape
//     (3x5x37 = 555 elements), LongShape (1031, more than one 1024-thread
//     group); empty shapes have a zero dimension; Op(dt) with no shape is 0-d.
//   - floatDTypes (float32, float16, bfloat16), intDTypes (uint8, int32,
//     int64, int8, int16, uint16, uint32, uint64), allDTypes (those, bool
//     and complex64).
//   - runCase(t, c) runs one case outside the table (all schedules);
//     materializeAll(r, operands, outputs) lays operands out for both sides,
//     views and bufs turn them into metal.Views and cpu.Bufs;
//     executor(schedule) is the shared harness executor of a schedule;
//     requireHarness(t) skips without clang++ (fails when CI=true);
//     metal.SetMaxGridDim (export_test.go) lowers the grid limit so that
//     the 2-D grids of huge arrays run on small ones.
//   - Every family runs in parallel with the others; a case's plan must not
//     depend on state another family changes.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/backend/metal/internal/mslcpu"
	"github.com/fathom-go/fathom/internal/opset"
)

// Layout is how an Operand is stored.
type Layout int

// The layouts.
const (
	Contig     Layout = iota // row-major
	Transposed               // stored with the axes reversed, viewed back
	Sliced                   // every other element of a larger buffer, last axis reversed, nonzero offset
	Broadcast                // stride 0 on axis 0 (like Scalar for fewer than 2 axes)
	Scalar                   // one element, every stride 0
)

func (l Layout) String() string {
	return [...]string{"contig", "transposed", "sliced", "broadcast", "scalar"}[l]
}

// Operand describes an input or output of a case.
type Operand struct {
	DType  array.DType
	Shape  []int
	Layout Layout
	// Gen, if not nil, draws element i's value (converted to DType;
	// complex64 draws the real and then the imaginary part).
	Gen func(r *rand.Rand, i int) float64
}

// Op returns a contiguous Operand.
func Op(dt array.DType, shape ...int) Operand {
	return Operand{DType: dt, Shape: append([]int{}, shape...)}
}

// With returns o stored with layout l.
func (o Operand) With(l Layout) Operand { o.Layout = l; return o }

// Values returns o with values drawn from gen.
func (o Operand) Values(gen func(r *rand.Rand, i int) float64) Operand { o.Gen = gen; return o }

// Case is one conformance case.
type Case struct {
	Name string
	In   []Operand
	Out  []Operand
	// GPU plans the operation on the views; CPU runs the backend/cpu
	// kernel on Bufs with the same contents and layout.
	GPU func(out, in []metal.View) ([]metal.Launch, error)
	CPU func(out, in []cpu.Buf) error
	// Tol scales the default tolerance (0 means 1).
	Tol float64
	// Check, if not nil, compares output k instead of the default
	// comparison; it reports the first difference, or "" if none.
	Check func(k int, got, want cpu.Buf) string
	// WantErr, if not empty, expects the plan to fail with an error whose
	// message contains it (CPU is not run).
	WantErr string
}

// Shapes with sizes that do not divide the threadgroup sizes.
var (
	OddShape  = []int{3, 5, 37}
	LongShape = []int{1031}
)

var (
	floatDTypes = []array.DType{array.Float32, array.Float16, array.BFloat16}
	intDTypes   = []array.DType{array.Uint8, array.Int32, array.Int64, array.Int8, array.Int16, array.Uint16, array.Uint32, array.Uint64}
	allDTypes   = []array.DType{array.Float32, array.Float16, array.BFloat16, array.Uint8, array.Int32, array.Int64,
		array.Int8, array.Int16, array.Uint16, array.Uint32, array.Uint64, array.Bool, array.Complex64}
)

type family struct {
	name  string
	cases func() []Case
}

var families []family

// registerFamily adds a family of cases to the suite.
func registerFamily(name string, cases func() []Case) {
	families = append(families, family{name, cases})
}

// hostMem is harness memory: a byte slice.
type hostMem []byte

func (m hostMem) Bytes() []byte { return m }

// newMem returns n bytes of harness memory.
func newMem(n int) metal.Memory { return hostMem(make([]byte, n)) }

// requireHarness skips the test when clang++ is missing, or fails it on CI.
func requireHarness(t *testing.T) {
	t.Helper()
	if err := mslcpu.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Metal conformance suite needs clang++ on CI: %v", err)
		}
		t.Skipf("skipping the Metal conformance suite: %v", err)
	}
}

// schedules are the thread orders every case runs under.
func schedules() []string {
	s := []string{"forward", "reverse"}
	if env := os.Getenv("MSL_SCHEDULE"); env != "" && env != "forward" && env != "reverse" {
		s = append(s, env)
	}
	return s
}

// TestConformanceSmallPipelines runs the suite on pipelines that allow
// fewer threads per threadgroup than the plans ask for, as a Mac's
// register-heavy kernels may (896 and 512, below the line kernels' 1024;
// 160, below every plan's 256 and sort's 512 and not a power of two), so
// every launch is fitted as the host fits it (metal.FitLaunch) and must
// still agree with the CPU. Only gemm and reduce_cols need their exact
// 256 threads: under 160 their cases must fail with an error naming the
// kernel and the limit.
func TestConformanceSmallPipelines(t *testing.T) {
	requireHarness(t)
	if testing.Short() {
		t.Skip("the conformance suite under small pipeline limits is long")
	}
	for _, limit := range []int{896, 512, 160} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			for _, f := range families {
				t.Run(f.name, func(t *testing.T) {
					t.Parallel()
					refused := 0
					for _, c := range f.cases() {
						if !runCaseLimited(t, c, limit) {
							refused++
						}
					}
					if refused > 0 {
						t.Logf("%d cases need a kernel's exact threadgroup of 256 threads, above %d", refused, limit)
					}
				})
			}
		})
	}
}

// TestFixedThreadgroupsFailByName checks that a pipeline allowing fewer
// than the 256 threads gemm and reduce_cols need makes their plans fail
// with an error that names the kernel and the limit, and that every other
// kernel fits.
func TestFixedThreadgroupsFailByName(t *testing.T) {
	requireHarness(t)
	seen := map[string]bool{}
	for _, f := range families {
		for _, c := range f.cases() {
			if c.WantErr != "" {
				continue
			}
			r := rand.New(rand.NewSource(1))
			_, gpuIn := materializeAll(r, c.In, false)
			_, gpuOut := materializeAll(r, c.Out, true)
			ls, err := c.GPU(views(gpuOut), views(gpuIn))
			if err != nil {
				t.Fatalf("%s/%s: %v", f.name, c.Name, err)
			}
			for _, l := range ls {
				_, err := metal.FitLaunch(l, 160, 32)
				fixed := strings.HasPrefix(l.Kernel, "gemm_") || strings.HasPrefix(l.Kernel, "reduce_cols_")
				switch {
				case fixed && err == nil:
					t.Errorf("%s: kernel %s fitted into 160 threads", c.Name, l.Kernel)
				case fixed:
					if _, ok := err.(*array.Error); !ok {
						t.Errorf("%s: error %T, want *array.Error", c.Name, err)
					}
					want := "kernel " + l.Kernel + " needs threadgroups of exactly 256 threads ([16 16 1]); its pipeline allows at most 160"
					if strings.HasPrefix(l.Kernel, "reduce_cols_") {
						want = strings.Replace(want, "[16 16 1]", "[32 8 1]", 1)
					}
					if !strings.HasSuffix(err.Error(), want) {
						t.Errorf("%s: error %q, want %q", c.Name, err, want)
					}
					seen[strings.SplitN(l.Kernel, "_", 2)[0]] = true
				case err != nil:
					t.Errorf("%s: kernel %s: %v", c.Name, l.Kernel, err)
				}
			}
		}
	}
	if !seen["gemm"] || !seen["reduce"] {
		t.Errorf("no case planned gemm or reduce_cols: %v", seen)
	}
}

func TestConformance(t *testing.T) {
	requireHarness(t)
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			seen := map[string]bool{}
			for _, c := range f.cases() {
				if seen[c.Name] {
					t.Fatalf("two cases named %s", c.Name)
				}
				seen[c.Name] = true
				runCase(t, c)
			}
		})
	}
}

// TestEveryKernelHasACase lists the kernels of every embedded library as
// the harness compiled them, and fails for any that no case plans. The
// plans are only called, not run, so this test does not depend on the
// order in which the tests run.
func TestEveryKernelHasACase(t *testing.T) {
	requireHarness(t)
	planned := map[string]bool{}
	for _, f := range families {
		for _, c := range f.cases() {
			if c.WantErr != "" {
				continue
			}
			r := rand.New(rand.NewSource(1))
			_, gpuIn := materializeAll(r, c.In, false)
			_, gpuOut := materializeAll(r, c.Out, true)
			ls, err := c.GPU(views(gpuOut), views(gpuIn))
			if err != nil {
				t.Errorf("%s/%s: %v", f.name, c.Name, err)
				continue
			}
			for _, l := range ls {
				planned[l.Library+" "+l.Kernel] = true
			}
		}
	}
	for _, lib := range metal.Libraries() {
		src, err := metal.LibrarySource(lib)
		if err != nil {
			t.Fatal(err)
		}
		if bad := unregisteredKernels(src); len(bad) > 0 {
			t.Errorf("%s: kernel functions %v are neither templates nor followed by register_kernel: the harness cannot see them", lib, bad)
		}
		names, err := mslcpu.Kernels(mslcpu.Library{Name: lib, Source: src})
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Errorf("%s: no kernels", lib)
		}
		var missing []string
		for _, n := range names {
			if !planned[lib+" "+n] {
				missing = append(missing, n)
			}
			delete(planned, lib+" "+n)
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			t.Errorf("%s: %d kernels have no conformance case: %s", lib, len(missing), strings.Join(missing, " "))
		}
	}
	for k := range planned {
		if !strings.HasPrefix(k, "gen:") {
			t.Errorf("a case plans kernel %q, which no library has", k)
		}
	}
}

// TestEveryCPUKernelHasAGPUKernel checks the elementwise families from the
// CPU's side: every unary and binary operation and dtype that the CPU
// computes (opset's Result) has its Metal kernels in unary.metal or
// binary.metal, in every variant, unless opset's Supported says the GPU
// lacks it; then there must be none, and the conformance suite checks
// that Metal refuses it by name. TestEveryKernelHasACase is the other
// side: every Metal kernel has a case.
func TestEveryCPUKernelHasAGPUKernel(t *testing.T) {
	requireHarness(t)
	have := map[string]bool{}
	for _, lib := range []string{"unary.metal", "binary.metal"} {
		src, err := metal.LibrarySource(lib)
		if err != nil {
			t.Fatal(err)
		}
		names, err := mslcpu.Kernels(mslcpu.Library{Name: lib, Source: src})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			have[n] = true
		}
	}
	check := func(base string, variants []string, gpu bool) {
		for _, v := range variants {
			switch name := base + "_" + v; {
			case gpu && !have[name]:
				t.Errorf("the CPU computes %s, but there is no Metal kernel %s", base, name)
			case !gpu && have[name]:
				t.Errorf("opset says the GPU lacks %s, but Metal has %s: update Supported", base, name)
			}
		}
	}
	for _, dt := range array.DTypes() {
		if !opset.HasDType(array.DeviceCPU, dt) {
			continue
		}
		for op := range opset.NumUnaryOps {
			if _, ok := op.Result(dt); ok {
				check("unary_"+op.String()+"_"+dt.String(), []string{"contig", "strided"}, op.Supported(array.DeviceGPU, dt))
			}
		}
		for op := range opset.NumBinaryOps {
			if _, ok := op.Result(dt); ok {
				check("binary_"+op.String()+"_"+dt.String(), []string{"vv", "sv", "vs", "strided"}, op.Supported(array.DeviceGPU, dt))
			}
		}
	}
}

// unregisteredKernels returns the plain (non-template) kernel functions of
// src that register_kernel does not name.
func unregisteredKernels(src string) []string {
	var bad []string
	lines := strings.Split(src, "\n")
	for i, line := range lines {
		s := strings.TrimSpace(line)
		var rest string
		switch {
		case strings.HasPrefix(s, "kernel void "):
			rest = strings.TrimPrefix(s, "kernel void ")
		case strings.HasPrefix(s, "[[kernel]] void "):
			rest = strings.TrimPrefix(s, "[[kernel]] void ")
		default:
			continue
		}
		name, _, _ := strings.Cut(rest, "(")
		if i > 0 && strings.HasPrefix(strings.TrimSpace(lines[i-1]), "template") {
			continue
		}
		if !strings.Contains(src, "register_kernel("+name+")") {
			bad = append(bad, name)
		}
	}
	return bad
}

// operandData is one materialized operand: its memory and strided view.
type operandData struct {
	data    []byte
	dt      array.DType
	shape   []int
	strides []int
	offset  int
}

func (d operandData) buf() cpu.Buf {
	return cpu.Buf{Data: d.data, DType: d.dt, Shape: d.shape, Strides: d.strides, Offset: d.offset}
}

func (d operandData) view() metal.View {
	return metal.View{Mem: hostMem(d.data), DType: d.dt, Shape: d.shape, Strides: d.strides, Offset: d.offset}
}

func (d operandData) clone() operandData {
	d.data = bytes.Clone(d.data)
	return d
}

func views(ds []operandData) []metal.View {
	vs := make([]metal.View, len(ds))
	for i, d := range ds {
		vs[i] = d.view()
	}
	return vs
}

func bufs(ds []operandData) []cpu.Buf {
	bs := make([]cpu.Buf, len(ds))
	for i, d := range ds {
		bs[i] = d.buf()
	}
	return bs
}

// garbage is the byte that fills memory no view element covers, and fresh
// outputs: a kernel must write every element of its output and nothing
// else.
const garbage = 0xA7

// materialize lays o out in fresh memory with its values drawn from r.
func materialize(r *rand.Rand, o Operand) operandData {
	shape := o.Shape
	nd := len(shape)
	n := 1
	for _, s := range shape {
		n *= s
	}
	sz := o.DType.Size()
	d := operandData{dt: o.DType, shape: shape, strides: make([]int, nd)}
	var store []int // storage shape (row-major)
	layout := o.Layout
	if layout == Broadcast && nd < 2 {
		layout = Scalar
	}
	switch layout {
	case Contig:
		store = shape
		copy(d.strides, strided.RowMajor(shape))
	case Transposed:
		store = make([]int, nd)
		for i := range shape {
			store[i] = shape[nd-1-i]
		}
		rs := strided.RowMajor(store)
		for i := range shape {
			d.strides[i] = rs[nd-1-i]
		}
	case Sliced:
		store = make([]int, nd)
		for i, s := range shape {
			store[i] = 2*s + 1
		}
		rs := strided.RowMajor(store)
		for i := range shape {
			d.strides[i] = 2 * rs[i]
			d.offset += rs[i] // start at index 1 of every axis
		}
		if nd > 0 && shape[nd-1] > 0 {
			d.offset += d.strides[nd-1] * (shape[nd-1] - 1)
			d.strides[nd-1] = -d.strides[nd-1]
		}
	case Broadcast:
		store = shape[1:]
		rs := strided.RowMajor(store)
		copy(d.strides[1:], rs)
	case Scalar:
		store = nil
	}
	total := 1
	for _, s := range store {
		total *= s
	}
	if n == 0 {
		total = 0
	}
	d.data = bytes.Repeat([]byte{garbage}, total*sz)
	if n == 0 {
		return d
	}
	// Walk the logical elements in row-major order; broadcast elements are
	// written several times with the value drawn for their first visit.
	idx := make([]int, nd)
	written := make([]bool, total)
	for i := 0; i < n; i++ {
		off := d.offset
		for k := range idx {
			off += idx[k] * d.strides[k]
		}
		if !written[off] {
			written[off] = true
			putValue(d.data[off*sz:], o.DType, drawValue(r, o, i))
		}
		for k := nd - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return d
}

// materializeAll materializes inputs (with values) or outputs (every
// byte garbage) for both sides.
func materializeAll(r *rand.Rand, ops []Operand, outputs bool) (cpuSide, gpuSide []operandData) {
	for _, o := range ops {
		d := materialize(r, o)
		if outputs {
			for i := range d.data {
				d.data[i] = garbage
			}
		}
		cpuSide = append(cpuSide, d)
		gpuSide = append(gpuSide, d.clone())
	}
	return cpuSide, gpuSide
}

// value is an element before conversion to its dtype: integers keep all
// 64 bits.
type value struct {
	c     complex128
	i     int64
	isInt bool
}

var (
	floatSpecials = []float64{0, math.Copysign(0, -1), 1, -1, math.NaN(), math.Inf(1), math.Inf(-1), 0.5, -2.5}
	intExtremes   = map[array.DType][]int64{
		array.Uint8:  {0, 1, 255, 128},
		array.Int32:  {0, 1, -1, math.MaxInt32, math.MinInt32},
		array.Int64:  {0, 1, -1, math.MaxInt64, math.MinInt64, 1 << 40},
		array.Int8:   {0, 1, -1, math.MaxInt8, math.MinInt8},
		array.Int16:  {0, 1, -1, math.MaxInt16, math.MinInt16},
		array.Uint16: {0, 1, math.MaxUint16, 1 << 15},
		array.Uint32: {0, 1, math.MaxUint32, 1 << 31},
		array.Uint64: {0, 1, -1, math.MinInt64, 1 << 40}, // -1 and MinInt64 are 2^64-1 and 2^63
	}
)

// drawValue draws element i of o: from o.Gen, or a mix of ordinary values
// and, for one element in eight, special ones.
func drawValue(r *rand.Rand, o Operand, i int) value {
	if o.Gen != nil {
		v := o.Gen(r, i)
		if o.DType == array.Complex64 {
			return value{c: complex(v, o.Gen(r, i))}
		}
		if o.DType.IsInteger() {
			return value{i: int64(v), isInt: true}
		}
		return value{c: complex(v, 0)}
	}
	special := r.Intn(8) == 0
	switch {
	case o.DType == array.Bool:
		return value{i: int64(r.Intn(2)), isInt: true}
	case o.DType.IsInteger():
		if ex := intExtremes[o.DType]; special && len(ex) > 0 {
			return value{i: ex[r.Intn(len(ex))], isInt: true}
		}
		if unsigned(o.DType) {
			return value{i: int64(r.Intn(256)), isInt: true}
		}
		return value{i: int64(r.Intn(201) - 100), isInt: true}
	case o.DType == array.Complex64:
		if special {
			return value{c: complex(floatSpecials[r.Intn(len(floatSpecials))], floatSpecials[r.Intn(len(floatSpecials))])}
		}
		return value{c: complex(r.Float64()*8-4, r.Float64()*8-4)}
	}
	if special {
		return value{c: complex(floatSpecials[r.Intn(len(floatSpecials))], 0)}
	}
	return value{c: complex(r.Float64()*8-4, 0)}
}

// unsigned reports whether dt is an unsigned integer dtype.
func unsigned(dt array.DType) bool {
	switch dt {
	case array.Uint8, array.Uint16, array.Uint32, array.Uint64:
		return true
	}
	return false
}

// putValue stores v as one element of dtype dt at the start of b.
func putValue(b []byte, dt array.DType, v value) {
	le := binary.LittleEndian
	re := real(v.c)
	iv := v.i
	if !v.isInt {
		iv = int64(re)
	}
	switch dt {
	case array.Bool:
		b[0] = 0
		if iv != 0 || (!v.isInt && re != 0) {
			b[0] = 1
		}
	case array.Uint8, array.Int8:
		b[0] = uint8(iv)
	case array.Int16, array.Uint16:
		le.PutUint16(b, uint16(iv))
	case array.Uint32:
		le.PutUint32(b, uint32(iv))
	case array.Uint64:
		if !v.isInt && re >= 1<<63 {
			le.PutUint64(b, uint64(re))
		} else {
			le.PutUint64(b, uint64(iv))
		}
	case array.Int32:
		le.PutUint32(b, uint32(int32(iv)))
	case array.Int64:
		le.PutUint64(b, uint64(iv))
	case array.Float16:
		le.PutUint16(b, uint16(array.NewF16(float32(re))))
	case array.BFloat16:
		le.PutUint16(b, uint16(array.NewBF16(float32(re))))
	case array.Float32:
		le.PutUint32(b, math.Float32bits(float32(re)))
	case array.Float64:
		le.PutUint64(b, math.Float64bits(re))
	case array.Complex64:
		le.PutUint32(b, math.Float32bits(float32(re)))
		le.PutUint32(b[4:], math.Float32bits(float32(imag(v.c))))
	}
}

// elemAt reads element off (in elements) of b as a complex128 (integers
// exactly, up to 2^53) and its raw bits.
func elemAt(b []byte, dt array.DType, off int) (complex128, uint64) {
	le := binary.LittleEndian
	p := b[off*dt.Size():]
	switch dt {
	case array.Bool, array.Uint8:
		return complex(float64(p[0]), 0), uint64(p[0])
	case array.Int32:
		v := int32(le.Uint32(p))
		return complex(float64(v), 0), uint64(uint32(v))
	case array.Int64:
		v := int64(le.Uint64(p))
		return complex(float64(v), 0), uint64(v)
	case array.Int8:
		v := int8(p[0])
		return complex(float64(v), 0), uint64(uint8(v))
	case array.Int16:
		v := int16(le.Uint16(p))
		return complex(float64(v), 0), uint64(uint16(v))
	case array.Uint16:
		v := le.Uint16(p)
		return complex(float64(v), 0), uint64(v)
	case array.Uint32:
		v := le.Uint32(p)
		return complex(float64(v), 0), uint64(v)
	case array.Uint64:
		v := le.Uint64(p)
		return complex(float64(v), 0), v
	case array.Float16:
		h := array.F16(le.Uint16(p))
		return complex(float64(h.Float32()), 0), uint64(h)
	case array.BFloat16:
		h := array.BF16(le.Uint16(p))
		return complex(float64(h.Float32()), 0), uint64(h)
	case array.Float32:
		u := le.Uint32(p)
		return complex(float64(math.Float32frombits(u)), 0), uint64(u)
	case array.Float64:
		u := le.Uint64(p)
		return complex(math.Float64frombits(u), 0), u
	}
	u := le.Uint64(p)
	return complex(float64(math.Float32frombits(uint32(u))), float64(math.Float32frombits(uint32(u>>32)))), u
}

// tolerances are (atol, rtol) per float dtype: about two ulps of the
// result, as the GPU's float32 functions are not correctly rounded and 16-bit
// results may round the other way once.
func tolerance(dt array.DType) (atol, rtol float64) {
	switch dt {
	case array.Float16:
		return 1e-4, 2e-3
	case array.BFloat16:
		return 1e-3, 1.6e-2
	}
	return 1e-6, 1e-5
}

// compareOutput compares the elements of view got with want (same layout
// and memory size) and checks that bytes outside the view are untouched.
// It returns the first difference, or "".
func compareOutput(c Case, k int, got, want cpu.Buf) string {
	if c.Check != nil {
		if msg := c.Check(k, got, want); msg != "" {
			return msg
		}
	}
	n := got.Size()
	nd := len(got.Shape)
	idx := make([]int, nd)
	sz := got.DType.Size()
	covered := make([]bool, len(got.Data)/sz)
	atol, rtol := tolerance(got.DType)
	scale := c.Tol
	if scale == 0 {
		scale = 1
	}
	for i := 0; i < n; i++ {
		off := got.Offset
		for k := range idx {
			off += idx[k] * got.Strides[k]
		}
		covered[off] = true
		if c.Check == nil {
			g, gb := elemAt(got.Data, got.DType, off)
			w, wb := elemAt(want.Data, want.DType, off)
			if !got.DType.IsInexact() {
				if gb != wb {
					return fmt.Sprintf("element %v: got %v, want %v", idx, real(g), real(w))
				}
			} else if !closeEnough(g, w, scale*atol, scale*rtol) {
				return fmt.Sprintf("element %v: got %v, want %v", idx, fmtC(g, got.DType), fmtC(w, got.DType))
			}
		}
		for k := nd - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < got.Shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	for e := range covered {
		if covered[e] {
			continue
		}
		for j := e * sz; j < (e+1)*sz; j++ {
			if got.Data[j] != garbage {
				return fmt.Sprintf("element %d of the memory, outside the output view, was written", e)
			}
		}
	}
	return ""
}

func fmtC(v complex128, dt array.DType) string {
	if dt == array.Complex64 {
		return fmt.Sprint(v)
	}
	return fmt.Sprint(real(v))
}

// closeEnough compares part by part: NaN matches NaN, infinities match
// exactly, finite parts within atol + rtol*|want| (the modulus, for
// complex values).
func closeEnough(g, w complex128, atol, rtol float64) bool {
	mag := 0.0
	for _, p := range []float64{real(w), imag(w)} {
		if !math.IsNaN(p) && !math.IsInf(p, 0) {
			mag = math.Hypot(mag, p)
		}
	}
	part := func(g, w float64) bool {
		switch {
		case math.IsNaN(g) || math.IsNaN(w):
			return math.IsNaN(g) && math.IsNaN(w)
		case math.IsInf(g, 0) || math.IsInf(w, 0):
			return g == w
		}
		return math.Abs(g-w) <= atol+rtol*mag
	}
	return part(real(g), real(w)) && part(imag(g), imag(w))
}

type execKey struct {
	schedule   string
	maxThreads int
}

var (
	execMu    sync.Mutex
	executors = map[execKey]*mslcpu.Executor{}
)

// sourced runs launches with the harness as the host runs them on a Mac:
// it fills in the sources of the embedded libraries, which plans name
// only, and fits each launch's threadgroup to what the kernel's pipeline
// allows (its declared maximum, MSL_MAX_THREADS, and the executor's
// MaxThreads).
type sourced struct{ e *mslcpu.Executor }

func (s sourced) Run(l metal.Launch) error {
	if l.Source == "" {
		src, err := metal.LibrarySource(l.Library)
		if err != nil {
			return err
		}
		l.Source = src
	}
	limit := mslcpu.PipelineMaxThreads(mslcpu.Library{Name: l.Library, Source: l.Source}, l.Kernel)
	if m := s.e.MaxThreads; m > 0 {
		limit = min(limit, m)
	}
	l, err := metal.FitLaunch(l, limit, 32)
	if err != nil {
		return err
	}
	return s.e.Run(l)
}

// executor is the shared harness executor of a schedule.
func executor(schedule string) sourced { return limitedExecutor(schedule, 0) }

// limitedExecutor is the shared harness executor of a schedule whose
// pipelines allow at most maxThreads threads per threadgroup (0: no
// limit but the kernels' own).
func limitedExecutor(schedule string, maxThreads int) sourced {
	execMu.Lock()
	defer execMu.Unlock()
	k := execKey{schedule, maxThreads}
	e, ok := executors[k]
	if !ok {
		e = &mslcpu.Executor{Schedule: schedule, MaxThreads: maxThreads}
		executors[k] = e
	}
	return sourced{e}
}

func caseSeed(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64() >> 1)
}

// runCase runs c on the CPU and, under every schedule, on the harness,
// and reports differences as errors of t.
func runCase(t *testing.T, c Case) {
	t.Helper()
	runCaseLimited(t, c, 0)
}

// runCaseLimited is runCase on executors whose pipelines allow at most
// maxThreads threads per threadgroup (0: no limit but the kernels' own).
// It returns false if a launch cannot fit that limit (a kernel that needs
// its exact threadgroup), which it leaves to the caller to judge.
func runCaseLimited(t *testing.T, c Case, maxThreads int) (fits bool) {
	t.Helper()
	r := rand.New(rand.NewSource(caseSeed(c.Name)))
	cpuIn, gpuIn := materializeAll(r, c.In, false)
	cpuOut, gpuOut := materializeAll(r, c.Out, true)
	if c.WantErr != "" {
		_, err := c.GPU(views(gpuOut), views(gpuIn))
		if err == nil || !strings.Contains(err.Error(), c.WantErr) {
			t.Errorf("%s: plan error %v, want one containing %q", c.Name, err, c.WantErr)
		}
		return true
	}
	if err := c.CPU(bufs(cpuOut), bufs(cpuIn)); err != nil {
		t.Errorf("%s: CPU kernel: %v", c.Name, err)
		return true
	}
	for _, sched := range schedules() {
		ins := make([]operandData, len(gpuIn))
		for i, d := range gpuIn {
			ins[i] = d.clone()
		}
		outs := make([]operandData, len(gpuOut))
		for i, d := range gpuOut {
			outs[i] = d.clone()
		}
		ls, err := c.GPU(views(outs), views(ins))
		if err != nil {
			t.Errorf("%s: plan: %v", c.Name, err)
			return true
		}
		e := limitedExecutor(sched, maxThreads)
		for _, l := range ls {
			if err := e.Run(l); err != nil {
				if maxThreads > 0 && strings.Contains(err.Error(), "needs threadgroups of exactly") {
					return false
				}
				t.Errorf("%s (%s): %v", c.Name, sched, err)
				return true
			}
		}
		for k := range outs {
			if msg := compareOutput(c, k, outs[k].buf(), cpuOut[k].buf()); msg != "" {
				t.Errorf("%s (%s, output %d, kernel %s): %s", c.Name, sched, k, kernelNames(ls), msg)
			}
		}
		for k := range ins {
			if !bytes.Equal(ins[k].data, gpuIn[k].data) {
				t.Errorf("%s (%s): input %d was modified", c.Name, sched, k)
			}
		}
	}
	return true
}

func kernelNames(ls []metal.Launch) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.Kernel
	}
	return strings.Join(names, ",")
}
