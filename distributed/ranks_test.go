//go:build unix

package distributed_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/distributed"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
)

var allDTypes = []array.DType{array.Bool, array.Uint8, array.Int8, array.Int16, array.Uint16, array.Int32,
	array.Uint32, array.Int64, array.Uint64, array.Float16, array.BFloat16, array.Float32, array.Float64, array.Complex64}

func ones(n int) *array.Array { return ops.Ones([]int{n}, array.Float32) }

// val is element i of rank r's array of dtype dt: small values, halves for
// floats, so that sums are exact in every dtype.
func val(dt array.DType, r, i int) float64 {
	switch {
	case dt == array.Bool:
		return b2f((i+r)%3 == 0)
	case dt.IsUnsigned():
		return float64((i*7 + r*3) % 11)
	case dt.IsInexact():
		return float64((i*7+r*3)%11-5) / 2
	}
	return float64((i*7+r*3)%11 - 5)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// rankArray is rank r's [n/3 3] array of dtype dt; complex64 has an
// imaginary part of its own.
func rankArray(dt array.DType, r, n int) *array.Array {
	v := make([]float64, n)
	c := make([]complex64, n)
	for i := range v {
		v[i] = val(dt, r, i)
		c[i] = complex(float32(v[i]), float32(val(dt, r+5, i)))
	}
	if dt == array.Complex64 {
		return array.FromSlice(c, n/3, 3)
	}
	return ops.AsType(array.FromSlice(v, n/3, 3), dt)
}

// values reads a as complex128 (real dtypes have no imaginary part).
func values(t *testing.T, a *array.Array) []complex128 {
	t.Helper()
	if a.DType() == array.Complex64 {
		c, err := array.ToSlice[complex64](a)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]complex128, len(c))
		for i, v := range c {
			out[i] = complex128(v)
		}
		return out
	}
	f, err := array.ToSlice[float64](ops.AsType(a, array.Float64))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]complex128, len(f))
	for i, v := range f {
		out[i] = complex(v, 0)
	}
	return out
}

// sizes are the element counts the collectives are tested on: one that
// travels with the processes' headers and one (3000 bytes and more) that
// MPI reduces or gathers itself.
var sizes = []int{6, 3000}

func TestRanksReduceEveryDType(t *testing.T) {
	n := world.Size()
	for _, dt := range allDTypes {
		for _, tc := range []struct {
			name string
			f    func(*array.Array, *distributed.Group) *array.Array
			fold func(a, b complex128) complex128
		}{
			{"AllSum", distributed.AllSum, func(a, b complex128) complex128 {
				if dt == array.Bool {
					return complex(b2f(a != 0 || b != 0), 0)
				}
				return a + b
			}},
			{"AllMax", distributed.AllMax, func(a, b complex128) complex128 { return complex(max(real(a), real(b)), 0) }},
			{"AllMin", distributed.AllMin, func(a, b complex128) complex128 { return complex(min(real(a), real(b)), 0) }},
		} {
			for _, size := range sizes {
				t.Run(fmt.Sprintf("%s/%v/%d", tc.name, dt, size), func(t *testing.T) {
					x := rankArray(dt, world.Rank(), size)
					if dt == array.Complex64 && tc.name != "AllSum" {
						err := array.Try(func() { tc.f(x, world) })
						var e *array.Error
						if !errors.As(err, &e) || !strings.Contains(e.Msg, "no order") {
							t.Fatalf("%s of complex64: got %v, want an *array.Error about order", tc.name, err)
						}
						return
					}
					y := tc.f(x, world)
					if !slices.Equal(y.Shape(), x.Shape()) || y.DType() != dt {
						t.Fatalf("got %v %v, want %v %v", y.DType(), y.Shape(), dt, x.Shape())
					}
					got := values(t, y)
					want := values(t, rankArray(dt, 0, size))
					for r := 1; r < n; r++ {
						v := values(t, rankArray(dt, r, size))
						for i := range want {
							want[i] = tc.fold(want[i], v[i])
						}
					}
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("element %d: got %v, want %v (size %d)", i, got[i], want[i], n)
						}
					}
				})
			}
		}
	}
}

// TestRanksStrided passes transposed views, which the collectives copy
// before sending.
func TestRanksStrided(t *testing.T) {
	n, r := world.Size(), world.Rank()
	for _, rows := range []int{3, 1500} {
		dts := []array.DType{array.Float32, array.Float16, array.Int32}
		if rows > 3 { // float16 holds integers to 2048
			dts[1] = array.Float64
		}
		for _, dt := range dts {
			// the transpose of [[0 1] [2 3] ...] + r, a view
			x := ops.Transpose(ops.AsType(ops.AddScalar(ops.Reshape(ops.Arange(0, float64(2*rows), 1, array.Float32), rows, 2), float64(r)), dt))
			if err := x.Eval(); err != nil {
				t.Fatal(err)
			}
			sum := values(t, distributed.AllSum(x, world))
			gat := values(t, distributed.AllGather(x, world))
			shift := float64(n*(n-1)) / 2
			for i := range 2 * rows {
				b := float64(2*(i%rows) + i/rows)
				if want := complex(float64(n)*b+shift, 0); sum[i] != want {
					t.Fatalf("%v AllSum element %d: got %v, want %v", dt, i, sum[i], want)
				}
				for q := range n {
					if want := complex(b+float64(q), 0); gat[q*2*rows+i] != want {
						t.Fatalf("%v AllGather rank %d element %d: got %v, want %v", dt, q, i, gat[q*2*rows+i], want)
					}
				}
			}
		}
	}
}

// TestRanksOffsetView: a row-major view that starts inside its storage
// (rows 1 onward) is read from its offset, whether it travels with the
// header or on its own.
func TestRanksOffsetView(t *testing.T) {
	n, r := world.Size(), world.Rank()
	for _, rows := range []int{3, 1500} {
		base := ops.AddScalar(ops.Reshape(ops.Arange(0, float64(2*(rows+1)), 1, array.Float32), rows+1, 2), float64(r))
		x := ops.SliceAxis(base, 0, ops.R(1, rows+1))
		if err := x.Eval(); err != nil {
			t.Fatal(err)
		}
		if x.Offset() == 0 || !x.RowMajor() {
			t.Fatalf("rows 1: of %v is not a row-major view with an offset (offset %d)", base.Shape(), x.Offset())
		}
		sum := values(t, distributed.AllSum(x, world))
		shift := float64(n*(n-1)) / 2
		for i := range 2 * rows {
			if want := complex(float64(n)*float64(i+2)+shift, 0); sum[i] != want {
				t.Fatalf("rows %d element %d: got %v, want %v", rows, i, sum[i], want)
			}
		}
	}
}

func TestRanksAllGatherEveryDType(t *testing.T) {
	n := world.Size()
	for _, dt := range allDTypes {
		for _, size := range sizes {
			y := distributed.AllGather(rankArray(dt, world.Rank(), size), world)
			if !slices.Equal(y.Shape(), []int{size / 3 * n, 3}) {
				t.Fatalf("%v: shape %v, want [%d 3]", dt, y.Shape(), size/3*n)
			}
			got := values(t, y)
			for r := range n {
				if want := values(t, rankArray(dt, r, size)); !slices.Equal(got[size*r:size*(r+1)], want) {
					t.Fatalf("%v[%d]: the rows of rank %d differ", dt, size, r)
				}
			}
		}
	}
	// A 0-d array gathers as a 1-d one.
	s := distributed.AllGather(array.Scalar(float32(world.Rank())), world)
	got := values(t, s)
	if len(got) != n {
		t.Fatalf("gather of scalars: %v", got)
	}
	for r := range n {
		if got[r] != complex(float64(r), 0) {
			t.Fatalf("gather of scalars: %v", got)
		}
	}
}

// TestRanksMismatchIsError: processes that pass different shapes, dtypes
// or collectives all get an *array.Error from Eval, and the group still
// works afterwards.
func TestRanksMismatchIsError(t *testing.T) {
	n, r := world.Size(), world.Rank()
	if n == 1 {
		t.Log("one process cannot disagree with itself; TestMPI runs this with several")
		return
	}
	// Each process names another that disagrees with it, and what it runs.
	q := (r + 1) % 2
	shapes := [][]int{{6, 1}, {1, 6}}
	dts := []array.DType{array.Float32, array.Int32}
	other := "rank 0 runs AllMax on float32 [3]"
	if r == 0 {
		other = "rank 1 runs AllSum on float32 [3]"
	}
	for _, tc := range []struct {
		name string
		f    func() *array.Array
		want string
	}{
		{"shape", func() *array.Array { return distributed.AllSum(ones(r+1), world) },
			fmt.Sprintf("rank %d runs AllSum on float32 [%d]", (r+1)%n, (r+1)%n+1)},
		{"dtype", func() *array.Array { return distributed.AllSum(ops.AsType(ones(3), dts[r%2]), world) },
			fmt.Sprintf("rank %d runs AllSum on %v [3]", q, dts[q])},
		{"same size", func() *array.Array { return distributed.AllGather(ops.Reshape(ones(6), shapes[r%2]...), world) },
			fmt.Sprintf("rank %d runs AllGather on float32 %v", q, shapes[q])},
		{"collective", func() *array.Array {
			if r == 0 {
				return distributed.AllMax(ones(3), world)
			}
			return distributed.AllSum(ones(3), world)
		}, other},
		{"large", func() *array.Array { return distributed.AllSum(ones(1000*(r+1)), world) },
			fmt.Sprintf("rank %d runs AllSum on float32 [%d]", (r+1)%n, 1000*((r+1)%n+1))},
	} {
		err := tc.f().Eval()
		var e *array.Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, tc.want) || !strings.Contains(e.Msg, "disagree") {
			t.Errorf("%s: got %v, want an *array.Error containing %q", tc.name, err, tc.want)
		}
	}
	// A collective made while a failing one was pending fails with it (it
	// never runs, on any process); the next one works.
	bad := distributed.AllSum(ones(r+1), world)
	after := distributed.AllSum(ones(3), world)
	if err := after.Eval(); err == nil {
		t.Fatal("a collective chained after a failing one succeeded")
	}
	if bad.Eval() == nil {
		t.Fatal("the failing collective succeeded")
	}
	if got := values(t, distributed.AllSum(ones(3), world)); got[0] != complex(float64(n), 0) {
		t.Fatalf("AllSum after the mismatches: %v", got)
	}
}

func TestRanksSendRecvRing(t *testing.T) {
	n, r := world.Size(), world.Rank()
	if n == 1 {
		err := array.Try(func() { distributed.Send(ones(3), 0, world) })
		var e *array.Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, "not another process") {
			t.Fatalf("Send in a group of one: got %v, want an *array.Error", err)
		}
		return
	}
	next, prev := (r+1)%n, (r+n-1)%n
	for _, size := range []int{5, 1 << 18} { // eager and rendezvous messages
		for _, dt := range []array.DType{array.Float32, array.BFloat16, array.Int64, array.Bool} {
			x := ops.AsType(ops.AddScalar(ops.Arange(0, float64(size), 1, array.Float32), float64(100*r)), dt)
			// Even ranks send first, odd ones receive first: a blocking
			// send waits for its receiver.
			var got *array.Array
			if r%2 == 0 {
				if err := distributed.Send(x, next, world).Eval(); err != nil {
					t.Fatal(err)
				}
				got = distributed.RecvLike(x, prev, world)
				if err := got.Eval(); err != nil {
					t.Fatal(err)
				}
			} else {
				got = distributed.Recv([]int{size}, dt, prev, world)
				if err := got.Eval(); err != nil {
					t.Fatal(err)
				}
				if err := distributed.Send(x, next, world).Eval(); err != nil {
					t.Fatal(err)
				}
			}
			want := ops.AsType(ops.AddScalar(ops.Arange(0, float64(size), 1, array.Float32), float64(100*prev)), dt)
			if a, b := values(t, got), values(t, want); !slices.Equal(a, b) {
				t.Fatalf("%v[%d] from rank %d: got %v..., want %v...", dt, size, prev, a[:3], b[:3])
			}
		}
	}
}

// TestRanksRecvMismatch: a receive that expects another shape fails, and
// the next message between the two processes arrives intact.
func TestRanksRecvMismatch(t *testing.T) {
	n, r := world.Size(), world.Rank()
	if n == 1 {
		t.Log("needs two processes; TestMPI runs it with several")
		return
	}
	switch r {
	case 0:
		for _, x := range []*array.Array{ones(3), ops.MulScalar(ones(4), 7)} {
			if err := distributed.Send(x, 1, world).Eval(); err != nil {
				t.Fatal(err)
			}
		}
	case 1:
		err := distributed.Recv([]int{4}, array.Float32, 0, world).Eval()
		var e *array.Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, "which sent float32 [3]") {
			t.Fatalf("got %v, want an *array.Error about the 3 elements sent", err)
		}
		got := values(t, distributed.Recv([]int{4}, array.Float32, 0, world))
		if !slices.Equal(got, []complex128{7, 7, 7, 7}) {
			t.Fatalf("the next message: %v", got)
		}
	}
}

// TestRanksOrderOfCreation: each process evaluates its collectives in
// another order, and they still run in the order they were made.
func TestRanksOrderOfCreation(t *testing.T) {
	n, r := world.Size(), world.Rank()
	xs := make([]*array.Array, 4)
	for i := range xs {
		xs[i] = distributed.AllSum(ops.MulScalar(ones(i+1), float64(i+1)), world)
	}
	order := []int{0, 1, 2, 3}
	if r%2 == 1 {
		slices.Reverse(order)
	}
	for _, i := range order {
		if got := values(t, xs[i]); got[i] != complex(float64(n*(i+1)), 0) {
			t.Fatalf("sum %d: %v", i, got)
		}
	}
}

func TestRanksSplit(t *testing.T) {
	n, r := world.Size(), world.Rank()
	color := r % 2
	sub, err := world.Split(color, n-r) // reverse order within each half
	if err != nil {
		t.Fatal(err)
	}
	var members []int
	for q := n - 1; q >= 0; q-- {
		if q%2 == color {
			members = append(members, q)
		}
	}
	if sub.Size() != len(members) || members[sub.Rank()] != r {
		t.Fatalf("rank %d: sub-group rank %d of %d, want position in %v", r, sub.Rank(), sub.Size(), members)
	}
	got := distributed.AllSum(array.FromSlice([]float64{float64(r)}), sub).Item()
	want := 0.0
	for _, q := range members {
		want += float64(q)
	}
	if got != want {
		t.Fatalf("sum over the sub-group %v: got %v, want %v", members, got, want)
	}
	if _, err := world.Split(-1, 0); err == nil {
		t.Fatal("a negative color gave no error")
	}
}

// globalLoss is the sum over the processes of every process's loss: what
// the gradients the rules give are gradients of.
func globalLoss(t *testing.T, f func(x *array.Array) *array.Array, x *array.Array) float64 {
	return distributed.AllSum(f(x), world).Item()
}

// checkGrad compares the gradient of f at x with central differences: each
// process in turn moves one of its elements while the others keep theirs.
// global says whether the gradient is of the sum of every process's loss
// (AllSum's rule) or of this process's own (AllGather's, as MLX).
func checkGrad(t *testing.T, f func(x *array.Array) *array.Array, x []float64, global bool, want []float64) {
	t.Helper()
	n, r := world.Size(), world.Rank()
	g := graph.Grad(func(in ...*array.Array) *array.Array { return f(in[0]) })(array.FromSlice(x))[0]
	got, err := array.ToSlice[float64](g)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("gradient element %d: got %v, want %v", i, got[i], want[i])
		}
	}
	const eps = 1e-6
	for q := range n {
		for i := range x {
			loss := func(d float64) float64 {
				xp := slices.Clone(x)
				if q == r {
					xp[i] += d
				}
				if global {
					return globalLoss(t, f, array.FromSlice(xp))
				}
				return f(array.FromSlice(xp)).Item()
			}
			fd := (loss(eps) - loss(-eps)) / (2 * eps)
			if q == r && math.Abs(fd-got[i]) > 1e-6*(1+math.Abs(fd)) {
				t.Fatalf("gradient element %d: %v, central difference %v", i, got[i], fd)
			}
		}
	}
}

func TestRanksGradAllSum(t *testing.T) {
	n, r := world.Size(), world.Rank()
	w := func(q int) []float64 { return []float64{float64(q + 1), float64(2 * q), 1} }
	x := []float64{1 + float64(r), 2, -3}
	f := func(x *array.Array) *array.Array {
		y := distributed.AllSum(x, world)
		return ops.Sum(ops.Mul(array.FromSlice(w(r)), ops.Square(y)))
	}
	// dG/dx_r = 2 y sum_q w_q, with y the sum of the xs.
	want := make([]float64, 3)
	for i := range want {
		y := 0.0
		for q := range n {
			y += []float64{1 + float64(q), 2, -3}[i]
			want[i] += 2 * w(q)[i]
		}
		want[i] *= y
	}
	checkGrad(t, f, x, true, want)
}

func TestRanksGradAllGather(t *testing.T) {
	n, r := world.Size(), world.Rank()
	wr := make([]float64, 3*n)
	for i := range wr {
		wr[i] = float64(i+1) * float64(r+2)
	}
	x := []float64{1 + float64(r), -2, 0.5}
	f := func(x *array.Array) *array.Array {
		return ops.Sum(ops.Mul(array.FromSlice(wr), ops.Square(distributed.AllGather(x, world))))
	}
	want := make([]float64, 3)
	for i := range want {
		want[i] = 2 * wr[3*r+i] * x[i]
	}
	checkGrad(t, f, x, false, want)
}

func TestRanksJVP(t *testing.T) {
	n, r := world.Size(), world.Rank()
	x := array.FromSlice([]float64{1, 2})
	tan := array.FromSlice([]float64{float64(r), 1})
	_, js := graph.JVP(func(in ...*array.Array) []*array.Array {
		return []*array.Array{distributed.AllSum(ops.Square(in[0]), world), distributed.AllGather(in[0], world)}
	}, []*array.Array{x}, []*array.Array{tan})
	sum, gat := values(t, js[0]), values(t, js[1])
	// d(x^2) = 2 x t, summed; the gather's tangent is the gathered tangents.
	if want := complex(2*float64(n*(n-1))/2, 0); sum[0] != want || sum[1] != complex(4*float64(n), 0) {
		t.Fatalf("AllSum tangent %v, want [%v %v]", sum, want, 4*n)
	}
	for q := range n {
		if gat[2*q] != complex(float64(q), 0) || gat[2*q+1] != 1 {
			t.Fatalf("AllGather tangent %v", gat)
		}
	}
}

func TestRanksVmap(t *testing.T) {
	n, r := world.Size(), world.Rank()
	x := ops.AddScalar(ops.Reshape(ops.Arange(0, 8, 1, array.Float32), 2, 4), float64(10*r))
	// Batch axis 1 in, 0 out: the sums of the columns, transposed.
	y := graph.Vmap(func(in ...*array.Array) []*array.Array {
		return []*array.Array{distributed.AllSum(in[0], world)}
	}, []int{1}, []int{0})(x)[0]
	if !slices.Equal(y.Shape(), []int{4, 2}) {
		t.Fatalf("vmapped AllSum shape %v", y.Shape())
	}
	got := values(t, y)
	for b := range 4 {
		for i := range 2 {
			want := float64(n*(4*i+b)) + float64(10*n*(n-1)/2)
			if got[2*b+i] != complex(want, 0) {
				t.Fatalf("vmapped AllSum [%d %d] = %v, want %v", b, i, got[2*b+i], want)
			}
		}
	}
	// Batch axis 0: each example (a row) is gathered on its own.
	z := graph.Vmap(func(in ...*array.Array) []*array.Array {
		return []*array.Array{distributed.AllGather(in[0], world)}
	}, []int{0}, []int{0})(x)[0]
	if !slices.Equal(z.Shape(), []int{2, 4 * n}) {
		t.Fatalf("vmapped AllGather shape %v", z.Shape())
	}
	got = values(t, z)
	for b := range 2 {
		for q := range n {
			for i := range 4 {
				if want := complex(float64(4*b+i+10*q), 0); got[b*4*n+4*q+i] != want {
					t.Fatalf("vmapped AllGather [%d %d] = %v, want %v", b, 4*q+i, got[b*4*n+4*q+i], want)
				}
			}
		}
	}
}

// TestRanksCompiled: a compiled function runs its collectives on every
// call, a receive that depends on none of its arguments included.
func TestRanksCompiled(t *testing.T) {
	n, r := world.Size(), world.Rank()
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		return []*array.Array{distributed.AllSum(ops.MulScalar(in[0], 2), world)}
	})
	defer f.Release()
	for call := range 3 {
		x := array.FromSlice([]float32{float32(call + r)})
		got := f.Call(x)[0].Item()
		if want := float64(2 * (n*call + n*(n-1)/2)); got != want {
			t.Fatalf("call %d: got %v, want %v", call, got, want)
		}
	}
	if n == 1 {
		return
	}
	recv := compile.Compile(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Add(in[0], distributed.Recv([]int{1}, array.Float32, 0, world))}
	})
	defer recv.Release()
	for call := range 3 {
		switch r {
		case 0:
			if err := distributed.Send(array.FromSlice([]float32{float32(10 * call)}), 1, world).Eval(); err != nil {
				t.Fatal(err)
			}
		case 1:
			if got := recv.Call(array.FromSlice([]float32{1}))[0].Item(); got != float64(10*call+1) {
				t.Fatalf("compiled receive, call %d: got %v", call, got)
			}
		}
	}
}

func TestRanksEmpty(t *testing.T) {
	e := ops.Zeros([]int{0, 3}, array.Float32)
	if s := distributed.AllSum(e, world); !slices.Equal(s.Shape(), []int{0, 3}) || s.Eval() != nil {
		t.Fatalf("AllSum of an empty array: %v %v", s.Shape(), s.Eval())
	}
	if g := distributed.AllGather(e, world); !slices.Equal(g.Shape(), []int{0, 3}) || g.Eval() != nil {
		t.Fatalf("AllGather of an empty array: %v %v", g.Shape(), g.Eval())
	}
}

func ExampleAllSum() {
	g, err := distributed.Init() // size 1 outside mpirun
	if err != nil {
		panic(err)
	}
	x := array.FromSlice([]float32{1, 2, 3})
	fmt.Println(distributed.AllSum(x, g), g.Size())
	// Output: array([1., 2., 3.], dtype=float32) 1
}

// TestRanksAverageGradients: nn.AverageGradients over the world packs the
// gradients, and the results are means over the processes whatever order
// each process evaluates them in (a map's).
func TestRanksAverageGradients(t *testing.T) {
	n, r := world.Size(), world.Rank()
	seq := func(k int, dt array.DType, scale, shift float64) *array.Array {
		return ops.AsType(ops.AddScalar(ops.MulScalar(ops.Arange(0, float64(k), 1, array.Float64), scale), shift), dt)
	}
	grads := map[string]*array.Array{
		"w": seq(6, array.Float32, 1, float64(r)),
		"b": ops.Reshape(seq(4, array.Float64, float64(r), 0), 2, 2),
		"s": ops.Reshape(seq(1, array.Float32, 0, float64(r))),
		"v": seq(3, array.Float32, 2, float64(r)),
	}
	avg := nn.AverageGradients(grads, world, nn.AllReduceSize(16))
	mid := float64(n-1) / 2
	want := map[string]func(i int) float64{
		"w": func(i int) float64 { return float64(i) + mid },
		"b": func(i int) float64 { return float64(i) * mid },
		"s": func(int) float64 { return mid },
		"v": func(i int) float64 { return 2*float64(i) + mid },
	}
	for name, y := range avg {
		if !slices.Equal(y.Shape(), grads[name].Shape()) {
			t.Fatalf("%s: shape %v, want %v", name, y.Shape(), grads[name].Shape())
		}
		for i, v := range values(t, y) {
			if w := want[name](i); v != complex(w, 0) {
				t.Fatalf("%s[%d] = %v, want %v", name, i, v, w)
			}
		}
	}
}

// TestRanksDataParallel: the gradient of a least-squares loss averaged
// over shards of a batch is the gradient of the whole batch.
func TestRanksDataParallel(t *testing.T) {
	n, r := world.Size(), world.Rank()
	rows := 6 // divisible by 1, 2 and 3 processes
	x := ops.DivScalar(ops.Reshape(ops.Arange(0, float64(3*rows), 1, array.Float64), rows, 3), 7)
	y := ops.Sin(ops.Arange(0, float64(rows), 1, array.Float64))
	w := array.FromSlice([]float64{0.5, -1, 2})
	loss := func(x, y *array.Array) func(in ...*array.Array) *array.Array {
		return func(in ...*array.Array) *array.Array {
			d := ops.Sub(ops.MatMul(x, in[0]), y)
			return ops.DivScalar(ops.Sum(ops.Square(d)), float64(x.Dim(0)))
		}
	}
	full := graph.Grad(loss(x, y))(w)[0]
	per := rows / n
	shard := graph.Grad(loss(ops.SliceAxis(x, 0, ops.R(r*per, (r+1)*per)), ops.SliceAxis(y, 0, ops.R(r*per, (r+1)*per))))(w)[0]
	avg := nn.AverageGradients(map[string]*array.Array{"w": shard}, world)["w"]
	a, b := values(t, avg), values(t, full)
	for i := range a {
		if math.Abs(real(a[i]-b[i])) > 1e-12*(1+math.Abs(real(b[i]))) {
			t.Fatalf("averaged shard gradient %v, whole-batch gradient %v", a, b)
		}
	}
}

// TestRanksBadInput: bad arguments panic with an *array.Error naming the
// operation, at the call.
func TestRanksBadInput(t *testing.T) {
	n := world.Size()
	for name, f := range map[string]func(){
		"distributed.AllSum":    func() { distributed.AllSum(nil, world) },
		"distributed.AllGather": func() { distributed.AllGather(nil, world) },
		"distributed.Send":      func() { distributed.Send(ones(2), n, world) },
		"distributed.Recv":      func() { distributed.Recv([]int{2}, array.DType(200), 0, world) },
		"distributed.RecvLike":  func() { distributed.RecvLike(nil, 0, world) },
	} {
		err := array.Try(f)
		var e *array.Error
		if !errors.As(err, &e) || e.Op != name {
			t.Errorf("%s: got %v, want an *array.Error of %s", name, err, name)
		}
	}
	err := array.Try(func() { distributed.Recv([]int{2}, array.Float32, world.Rank(), world) })
	if err == nil || !strings.Contains(err.Error(), "not another process") {
		t.Errorf("a receive from this process: got %v", err)
	}
}
