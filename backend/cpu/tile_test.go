package cpu

import (
	"math"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// tileSpecials are the operands of the tile kernels' tests: NaN either
// side, signed zeros, infinities, subnormals and overflow.
var tileSpecials = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2.5, -3.75, 1e-40, -1e-40, 1e30, -1e30,
	math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}

func sameF32(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y) || x != x && y != y
}

// TestVecScalar checks the scalar-operand kernels of every instruction set
// this machine runs against binary.go's loops, bit for bit, for every
// special scalar on either side, at every length up to a few vectors and
// from unaligned starts.
func TestVecScalar(t *testing.T) {
	a := make([]float32, 0, 300)
	for len(a) < cap(a) {
		a = append(a, tileSpecials...)
	}
	a = a[:cap(a)]
	names, impls := vecImplsUnderTest()
	for k, impl := range impls {
		if impl == nil {
			continue
		}
		// the loops that store the ordinary way, then those that store
		// around the caches
		plain, nt := vecArithLoops(impl, false), vecArithLoops(impl, true)
		for i, l := range append(plain[:], nt[:]...) {
			if l.vv == nil {
				continue
			}
			op := opset.BinaryOp(i % len(plain))
			how := "stores the ordinary way"
			if i >= len(plain) {
				how = "stores around the caches"
			}
			g := goBinaryKernel(op)
			for _, s := range tileSpecials {
				for n := range 70 {
					for _, lo := range []int{0, 1, 3, 7, 150} {
						x := a[lo : lo+n]
						got, want := make([]float32, n), make([]float32, n)
						l.vs(got, x, s)
						storeFence()
						g.vs(want, x, s)
						for i := range n {
							if !sameF32(got[i], want[i]) {
								t.Fatalf("%s %v, which %s: (%g, scalar %g) = %g, want %g", names[k], op, how, x[i], s, got[i], want[i])
							}
						}
						l.sv(got, s, x)
						storeFence()
						g.sv(want, s, x)
						for i := range n {
							if !sameF32(got[i], want[i]) {
								t.Fatalf("%s %v, which %s: (scalar %g, %g) = %g, want %g", names[k], op, how, s, x[i], got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestTripleKernels checks that the multiply-adds and the products of
// three of every implementation round the first product, bit for bit as
// Mul then Add (or Mul then Mul) do, on the special values and on products
// whose fused and unfused results differ.
func TestTripleKernels(t *testing.T) {
	var a, b, c []float32
	for _, x := range tileSpecials {
		for _, y := range tileSpecials {
			for _, z := range tileSpecials[:6] {
				a, b, c = append(a, x), append(b, y), append(c, z)
			}
		}
	}
	// (1+2^-12)^2 - 1 - 2^-11 is 2^-24 fused and 0 rounded twice
	e := float32(1) + 1.0/4096
	for range 40 {
		a, b, c = append(a, e), append(b, e), append(c, -1-1.0/2048)
	}
	mul := goBinaryKernel(opset.Mul)
	for _, tc := range []struct {
		name   string
		second opset.BinaryOp
	}{{"mulAdd", opset.Add}, {"mulMul", opset.Mul}} {
		second := goBinaryKernel(tc.second)
		want := make([]float32, len(a))
		mul.vv(want, a, b)
		second.vv(want, want, c)
		if tc.second == opset.Add && want[len(want)-1] != 0 {
			t.Fatalf("the twice-rounded reference is %g, want 0", want[len(want)-1])
		}
		names, impls := vecImplsUnderTest()
		for k, impl := range impls {
			for _, nt := range []bool{false, true} {
				how := names[k]
				if nt {
					how += ", storing around the caches,"
				}
				testTripleLoops(t, how, tc.name, impl, tc.second, nt, a, b, c, want, e)
			}
		}
	}
}

// testTripleLoops checks tripleLoops(impl, second, nt) against want, the
// product of a and b then second with c, rounded twice.
func testTripleLoops(t *testing.T, impl, name string, vi *vecImpl, secondOp opset.BinaryOp, nt bool, a, b, c, want []float32, e float32) {
	mul, second := goBinaryKernel(opset.Mul), goBinaryKernel(secondOp)
	vvv, vsv := tripleLoops(vi, secondOp, nt)
	for n := range 70 {
		for _, lo := range []int{0, 1, 3, 7, 150, len(a) - 70} {
			got := make([]float32, n)
			vvv(got, a[lo:lo+n], b[lo:lo+n], c[lo:lo+n])
			storeFence()
			for i := range n {
				if !sameF32(got[i], want[lo+i]) {
					t.Fatalf("%s %s(%g, %g, %g) = %g, want %g", impl, name, a[lo+i], b[lo+i], c[lo+i], got[i], want[lo+i])
				}
			}
		}
	}
	for _, s := range append(tileSpecials, e) {
		w := make([]float32, len(a))
		mul.vs(w, a, s)
		second.vv(w, w, c)
		got := make([]float32, len(a))
		vsv(got, a, s, c)
		storeFence()
		for i := range got {
			if !sameF32(got[i], w[i]) {
				t.Fatalf("%s %sS(%g, scalar %g, %g) = %g, want %g", impl, name, a[i], s, c[i], got[i], w[i])
			}
		}
	}
}

// TestTileFuncs checks the byte-level tile functions the fused interpreter
// calls against Binary on the same operands, for both float dtypes. The
// scalar kernels are checked against Binary on a run filled with the
// scalar, which takes the two-run kernels, not the scalar ones under test.
func TestTileFuncs(t *testing.T) {
	const n = 37
	for _, dt := range []array.DType{array.Float32, array.Float64} {
		x, y, z := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			x[i], y[i], z[i] = float64(i)-17.5, 0.25*float64(i*i)-3, float64(2*i)+0.5
		}
		buf := func(v []float64) Buf { return contiguous(toBytes(v, dt), dt, []int{len(v)}) }
		s := toBytes([]float64{-1.5}, dt)
		filled := make([]float64, n)
		for i := range filled {
			filled[i] = -1.5
		}
		for _, op := range []opset.BinaryOp{opset.Add, opset.Sub, opset.Mul, opset.Div, opset.Maximum, opset.Minimum} {
			vs, sv := binaryScalarTileFuncs(op, dt)
			if vs == nil || sv == nil {
				t.Fatalf("%v %v has no scalar tile functions", dt, op)
			}
			for _, right := range []bool{true, false} {
				got := make([]byte, n*dt.Size())
				want := contiguous(make([]byte, n*dt.Size()), dt, []int{n})
				var err error
				if right {
					vs(got, buf(x).Data, s)
					err = Binary(op, want, buf(x), buf(filled))
				} else {
					sv(got, buf(x).Data, s)
					err = Binary(op, want, buf(filled), buf(x))
				}
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want.Data) {
					t.Errorf("%v %v with the scalar on the right %v: %v, want %v", dt, op, right, fromBytes(got, dt), fromBytes(want.Data, dt))
				}
			}
		}
		for _, tr := range []struct {
			name   string
			second opset.BinaryOp
		}{{"mulAdd", opset.Add}, {"mulMul", opset.Mul}} {
			vvv, vsv := productTileFuncs(tr.second, dt)
			prod := contiguous(make([]byte, n*dt.Size()), dt, []int{n})
			want := contiguous(make([]byte, n*dt.Size()), dt, []int{n})
			if err := Binary(opset.Mul, prod, buf(x), buf(y)); err != nil {
				t.Fatal(err)
			}
			if err := Binary(tr.second, want, prod, buf(z)); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, n*dt.Size())
			vvv(got, buf(x).Data, buf(y).Data, buf(z).Data)
			if string(got) != string(want.Data) {
				t.Errorf("%v %s: %v, want %v", dt, tr.name, fromBytes(got, dt), fromBytes(want.Data, dt))
			}
			if err := Binary(opset.Mul, prod, buf(x), buf(filled)); err != nil {
				t.Fatal(err)
			}
			if err := Binary(tr.second, want, prod, buf(z)); err != nil {
				t.Fatal(err)
			}
			vsv(got, buf(x).Data, s, buf(z).Data)
			if string(got) != string(want.Data) {
				t.Errorf("%v %sS: %v, want %v", dt, tr.name, fromBytes(got, dt), fromBytes(want.Data, dt))
			}
		}
	}
}

func toBytes(v []float64, dt array.DType) []byte {
	b := make([]byte, len(v)*dt.Size())
	if dt == array.Float32 {
		d := asSlice[float32](b)
		for i, x := range v {
			d[i] = float32(x)
		}
		return b
	}
	copy(asSlice[float64](b), v)
	return b
}

func fromBytes(b []byte, dt array.DType) []float64 {
	if dt == array.Float32 {
		var out []float64
		for _, x := range asSlice[float32](b) {
			out = append(out, float64(x))
		}
		return out
	}
	return asSlice[float64](b)
}

// TestStoreStream copies with and without the non-temporal kernel: 64-byte
// aligned and not, lengths around whole vectors, and odd byte counts.
func TestStoreStream(t *testing.T) {
	src := make([]byte, 1<<12+64)
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	back := make([]byte, 1<<13)
	base := int(64 - uintptr(unsafe.Pointer(&back[0]))%64) // back[base:] is 64-byte aligned
	for _, off := range []int{0, 4, 60} {
		for _, n := range []int{0, 3, 4, 60, 64, 68, 128, 1000, 1 << 12} {
			dst := back[base+off:][:n]
			clear(back)
			storeStream(dst, src[:n])
			if string(dst) != string(src[:n]) {
				t.Fatalf("offset %d, %d bytes: copied %v, want %v", off, n, dst, src[:n])
			}
			if back[base+off+n] != 0 || (base+off > 0 && back[base+off-1] != 0) {
				t.Fatalf("offset %d, %d bytes: wrote outside dst", off, n)
			}
		}
	}
}

// TestConvertTileFunc checks the direct conversions, for every source
// dtype they take, on values that Copy has stored in that dtype.
func TestConvertTileFunc(t *testing.T) {
	vals := []float64{0, 1, -1, 2.5, -3.75, 127, 255, 1e6 + 1, -2147483648, 16777217, math.Inf(1), math.NaN()}
	for _, from := range []array.DType{array.Bool, array.Uint8, array.Int32, array.Int64, array.Float32, array.Float64} {
		src := contiguous(make([]byte, len(vals)*from.Size()), from, []int{len(vals)})
		if err := Copy(src, contiguous(toBytes(vals, array.Float64), array.Float64, []int{len(vals)})); err != nil {
			t.Fatal(err)
		}
		for _, to := range []array.DType{array.Float32, array.Float64} {
			f := convertTileFunc(from, to)
			if f == nil {
				t.Fatalf("no conversion from %v to %v", from, to)
			}
			got := make([]byte, len(vals)*to.Size())
			f(got, src.Data)
			// every source value is exact in float64, so rounding it
			// once to the target is the conversion's result
			w := make([]float64, len(vals))
			for i := range w {
				var v float64
				switch from {
				case array.Bool:
					if elems[bool](src)[i] {
						v = 1
					}
				case array.Uint8:
					v = float64(elems[uint8](src)[i])
				case array.Int32:
					v = float64(elems[int32](src)[i])
				case array.Int64:
					v = float64(elems[int64](src)[i])
				case array.Float32:
					v = float64(elems[float32](src)[i])
				default:
					v = elems[float64](src)[i]
				}
				if to == array.Float32 {
					v = float64(float32(v))
				}
				w[i] = v
			}
			g := fromBytes(got, to)
			for i := range g {
				if math.Float64bits(g[i]) != math.Float64bits(w[i]) {
					t.Errorf("%v %v -> %v: %v, want %v", from, vals[i], to, g[i], w[i])
				}
			}
		}
	}
	if convertTileFunc(array.Float32, array.Int32) != nil || convertTileFunc(array.Complex64, array.Float32) != nil {
		t.Error("a conversion that is not a plain Go one has a tile function")
	}
}

// goCompare is Go's comparison operator of op, written out apart from
// binary.go's loops.
func goCompare[T float32 | float64](op opset.BinaryOp, a, b T) bool {
	switch op {
	case opset.Equal:
		return a == b
	case opset.NotEqual:
		return a != b
	case opset.Less:
		return a < b
	case opset.LessEqual:
		return a <= b
	case opset.Greater:
		return a > b
	}
	return a >= b
}

// TestVecCompare checks the comparison loops of every instruction set
// this machine runs, float32 and float64, against Go's operators on every
// pair of special values (NaN either side, signed zeros, infinities,
// subnormals), with a second operand or a scalar on either side, at every
// length up to a few vectors and from unaligned starts.
func TestVecCompare(t *testing.T) {
	specials64 := []float64{5e-324, -5e-324, 1e300, -1e300}
	for _, v := range tileSpecials {
		specials64 = append(specials64, float64(v))
	}
	names, impls := vecImplsUnderTest()
	for k, impl := range impls {
		if impl == nil {
			continue
		}
		t.Run(names[k]+"/float32", func(t *testing.T) { testVecCompare(t, vecCompareLoops(impl, compareKernels32), tileSpecials) })
		t.Run(names[k]+"/float64", func(t *testing.T) { testVecCompare(t, vecCompareLoops(impl, compareKernels64), specials64) })
	}
}

func testVecCompare[T float32 | float64](t *testing.T, loops [opset.NumBinaryOps]binKernel[T, bool], specials []T) {
	a := make([]T, 0, 300)
	for len(a) < cap(a) {
		a = append(a, specials...)
	}
	a = a[:cap(a)]
	// b pairs each special with every other one along a
	b := make([]T, len(a))
	for i := range b {
		b[i] = specials[(i/len(specials)+i)%len(specials)]
	}
	for _, op := range []opset.BinaryOp{opset.Equal, opset.NotEqual, opset.Less, opset.LessEqual, opset.Greater, opset.GreaterEqual} {
		l := loops[op]
		if l.vv == nil || l.vs == nil || l.sv == nil {
			t.Fatalf("%v has no vector loops", op)
		}
		for n := range 70 {
			for _, lo := range []int{0, 1, 3, 7, 150} {
				x, y := a[lo:lo+n], b[lo:lo+n]
				got := make([]bool, n)
				l.vv(got, x, y)
				for i := range n {
					if want := goCompare(op, x[i], y[i]); got[i] != want {
						t.Fatalf("%v(%g, %g) = %v, want %v", op, x[i], y[i], got[i], want)
					}
				}
				for _, s := range specials {
					l.vs(got, x, s)
					for i := range n {
						if want := goCompare(op, x[i], s); got[i] != want {
							t.Fatalf("%v(%g, scalar %g) = %v, want %v", op, x[i], s, got[i], want)
						}
					}
					l.sv(got, s, x)
					for i := range n {
						if want := goCompare(op, s, x[i]); got[i] != want {
							t.Fatalf("%v(scalar %g, %g) = %v, want %v", op, s, x[i], got[i], want)
						}
					}
				}
			}
		}
	}
}

// TestVecU8ToFloat checks the byte to float32 and float64 kernels of
// every instruction set this machine runs, that they convert the whole
// vectors and nothing past them, and every byte value through the
// conversions that use them.
func TestVecU8ToFloat(t *testing.T) {
	names, impls := vecImplsUnderTest()
	for k, impl := range impls {
		if impl == nil {
			continue
		}
		t.Run(names[k]+"/float32", func(t *testing.T) { testU8ToFloat(t, impl.u8ToF32, impl.width) })
		t.Run(names[k]+"/float64", func(t *testing.T) { testU8ToFloat(t, impl.u8ToF64, impl.width/2) })
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, to := range []array.DType{array.Float32, array.Float64} {
		got := make([]byte, 256*to.Size())
		convertTileFunc(array.Uint8, to)(got, all)
		for i, v := range fromBytes(got, to) {
			if v != float64(i) {
				t.Fatalf("uint8 %d became %v %g", i, to, v)
			}
		}
	}
}

func testU8ToFloat[D float32 | float64](t *testing.T, kernel func(dst []D, src []uint8) int, lanes int) {
	src := make([]uint8, 300)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	for n := range 70 {
		for _, lo := range []int{0, 1, 5, 44} {
			x := src[lo : lo+n]
			got := make([]D, n+1)
			got[n] = -1
			m := kernel(got[:n], x)
			if m != n/lanes*lanes {
				t.Fatalf("converted %d of %d elements, want the whole vectors", m, n)
			}
			for i := range m {
				if got[i] != D(x[i]) {
					t.Fatalf("%d became %g", x[i], got[i])
				}
			}
			if got[n] != -1 {
				t.Fatalf("wrote past the end")
			}
		}
	}
}
