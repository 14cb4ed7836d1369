package cpu

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// chainTestStep is an operation of a chain under test.
type chainTestStep struct {
	unary     opset.UnaryOp
	binary    opset.BinaryOp
	isBinary  bool
	operand   chainOperand
	in        int // the operand's input
	s         float32
	accSecond bool
}

func (st chainTestStep) String() string {
	if !st.isBinary {
		return st.unary.String()
	}
	return fmt.Sprintf("%v(%v %d %g second %v)", st.binary, st.operand, st.in, st.s, st.accSecond)
}

// chainWant computes steps from input 0 of xs one tile kernel at a time,
// as the fused interpreter does without a chain.
func chainWant(xs [][]float32, steps []chainTestStep) []float32 {
	acc := append([]float32(nil), xs[0]...)
	v := make([]float32, len(acc))
	for _, st := range steps {
		if !st.isBinary {
			unaryTileFunc(st.unary, array.Float32)(asBytes(acc), asBytes(acc))
			continue
		}
		x := xs[st.in]
		switch st.operand {
		case chainX:
			copy(v, x)
		case chainScalar:
			for i := range v {
				v[i] = st.s
			}
		case chainXScalar:
			mul, _ := binaryScalarTileFuncs(opset.Mul, array.Float32)
			mul(asBytes(v), asBytes(x), asBytes([]float32{st.s}))
		}
		k := binaryTileFunc(st.binary, array.Float32)
		if st.accSecond {
			k(asBytes(acc), asBytes(v), asBytes(acc))
		} else {
			k(asBytes(acc), asBytes(acc), asBytes(v))
		}
	}
	return acc
}

// TestChain runs every operation of the chain kernel, with each operand
// either side, and a program with several, against the tile kernels bit
// for bit: over the special values, at lengths around whole blocks, and
// with the stores around the caches from every start within a cache line.
func TestChain(t *testing.T) {
	if newChain() == nil {
		t.Skip("no chain kernel (AVX-512)")
	}
	x := append(append(vecSpecial(), tileSpecials...), benchInput(700)...)
	// a second input: the first reversed, so that specials meet others
	y := slices.Clone(x)
	slices.Reverse(y)
	xs := [][]float32{x, y}
	var progs [][]chainTestStep
	for _, op := range []opset.UnaryOp{opset.Neg, opset.Square, opset.Exp, opset.Expm1, opset.Log, opset.Log1p, opset.Tanh, opset.Sigmoid, opset.Erf, opset.Sqrt} {
		progs = append(progs, []chainTestStep{{unary: op}})
	}
	for _, op := range []opset.BinaryOp{opset.Add, opset.Sub, opset.Mul, opset.Div, opset.Maximum, opset.Minimum} {
		for o := chainX; o <= chainXScalar; o++ {
			for _, second := range []bool{false, true} {
				progs = append(progs, []chainTestStep{{binary: op, isBinary: true, operand: o, s: -0.75, accSecond: second}})
			}
		}
	}
	// ReLU both ways round, against the zeros of either sign in x
	for _, second := range []bool{false, true} {
		progs = append(progs, []chainTestStep{{binary: opset.Maximum, isBinary: true, operand: chainScalar, accSecond: second}})
	}
	// tanh-GELU: 0.5x (1 + tanh(sqrt(2/pi) (x + 0.044715 x³)))
	progs = append(progs, []chainTestStep{
		{unary: opset.Square}, {binary: opset.Mul, isBinary: true}, {binary: opset.Mul, isBinary: true, operand: chainScalar, s: 0.044715},
		{binary: opset.Add, isBinary: true}, {binary: opset.Mul, isBinary: true, operand: chainScalar, s: 0.7978846},
		{unary: opset.Tanh}, {binary: opset.Add, isBinary: true, operand: chainScalar, s: 1},
		{binary: opset.Mul, isBinary: true, operand: chainXScalar, s: 0.5},
	})
	// the second input in every operand form
	progs = append(progs, []chainTestStep{
		{binary: opset.Sub, isBinary: true, operand: chainX, in: 1, accSecond: true}, {unary: opset.Tanh},
		{binary: opset.Mul, isBinary: true, operand: chainXScalar, in: 1, s: 1.5}, {binary: opset.Add, isBinary: true, operand: chainX},
		{binary: opset.Maximum, isBinary: true, operand: chainX, in: 1},
	})
	buf := make([]float32, len(x)+32)
	for _, steps := range progs {
		c := newChain()
		c.Load(0)
		for _, st := range steps {
			ok := false
			if st.isBinary {
				ok = c.Binary(st.binary, st.operand, st.in, st.s, st.accSecond)
			} else {
				ok = c.Unary(st.unary)
			}
			if !ok {
				t.Fatalf("%v: not in the chain kernel", st)
			}
		}
		want := chainWant(xs, steps)
		for _, nt := range []bool{false, true} {
			for lo := range 16 {
				for _, n := range []int{0, 1, 127, 128, 129, 300, len(x)} {
					a := uintptr(unsafe.Pointer(&buf[0]))
					got := buf[int(-a%64/4)+lo:][:n]
					clear(got)
					srcs := [][]byte{asBytes(x[:n]), asBytes(y[:n])}
					if nt {
						c.RunNT(asBytes(got), srcs)
						storeFence()
					} else {
						c.Run(asBytes(got), srcs)
					}
					for i := range n {
						if !sameF32(got[i], want[i]) {
							t.Fatalf("%v (streamed %v) over %d elements %d past alignment: f(%g) = %g, want %g", steps, nt, n, lo, x[i], got[i], want[i])
						}
					}
				}
			}
		}
	}
	// a destination that is not 4-byte aligned takes no streaming stores
	c := newChain()
	c.Load(0)
	c.Unary(opset.Tanh)
	b := make([]byte, 4*len(x)+1)
	c.RunNT(b[1:], [][]byte{asBytes(x)})
	got := make([]float32, len(x))
	copy(asBytes(got), b[1:])
	want := chainWant(xs, []chainTestStep{{unary: opset.Tanh}})
	for i := range got {
		if !sameF32(got[i], want[i]) {
			t.Fatalf("tanh into an odd address: f(%g) = %g, want %g", x[i], got[i], want[i])
		}
	}
	c = newChain()
	if c.Unary(opset.Sin) || c.Unary(opset.Rsqrt) || c.Binary(opset.Remainder, chainX, 0, 0, false) || c.Binary(opset.Pow, chainScalar, 0, 2, false) ||
		c.Binary(opset.Add, chainXScalar, chainInputs, 2, false) || c.Load(-1) {
		t.Error("the chain kernel takes an operation or input it does not have")
	}
	if len(c.code) != 1 || len(c.scalars) != 0 {
		t.Errorf("refused operations left code %v and scalars %v", c.code, c.scalars)
	}
}

// asBytes views v's elements as bytes.
func asBytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

// TestChainSlots runs a program that saves values in slots, reads them
// back as operands either side and reloads one, against the tile kernels
// bit for bit.
func TestChainSlots(t *testing.T) {
	c := newChain()
	if c == nil {
		t.Skip("no chain kernel (AVX-512)")
	}
	x := append(append(vecSpecial(), tileSpecials...), benchInput(300)...)
	y := slices.Clone(x)
	slices.Reverse(y)
	n := len(x)
	un := func(op opset.UnaryOp, v []float32) []float32 {
		d := make([]float32, n)
		unaryTileFunc(op, array.Float32)(asBytes(d), asBytes(v))
		return d
	}
	bin := func(op opset.BinaryOp, a, b []float32) []float32 {
		d := make([]float32, n)
		binaryTileFunc(op, array.Float32)(asBytes(d), asBytes(a), asBytes(b))
		return d
	}
	s2 := un(opset.Tanh, x)
	s7 := bin(opset.Sub, s2, un(opset.Exp, s2))
	acc := bin(opset.Mul, bin(opset.Div, s2, bin(opset.Maximum, y, s7)), s7)
	want := bin(opset.Add, un(opset.Sigmoid, s2), acc)
	ok := c.Load(0) && c.Unary(opset.Tanh) && c.Save(2) && c.Unary(opset.Exp) &&
		c.Binary(opset.Sub, chainSlot, 2, 0, true) && c.Save(7) && c.Load(1) &&
		c.Binary(opset.Maximum, chainSlot, 7, 0, false) && c.Binary(opset.Div, chainSlot, 2, 0, true) &&
		c.Binary(opset.Mul, chainSlot, 7, 0, false) && c.Save(0) && c.LoadSlot(2) && c.Unary(opset.Sigmoid) &&
		c.Binary(opset.Add, chainSlot, 0, 0, false)
	if !ok {
		t.Fatal("the chain kernel refused an operation")
	}
	if c.Save(chainSlots) || c.LoadSlot(-1) || c.Binary(opset.Add, chainSlot, chainSlots, 0, false) {
		t.Error("the chain kernel takes a slot beyond ChainSlots")
	}
	got := make([]float32, n)
	c.Run(asBytes(got), [][]byte{asBytes(x), asBytes(y)})
	for i := range got {
		if !sameF32(got[i], want[i]) {
			t.Fatalf("element %d, f(%g, %g) = %g, want %g", i, x[i], y[i], got[i], want[i])
		}
	}
}
