package metal

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
	"github.com/fathom-go/fathom/internal/strided"
)

// TestScratchComesFromTheDeviceAllocator plans every operation that needs
// intermediate memory (a split reduction, a long sort, both scatters, a
// split gemv_t, the index-error flag) over device operands and checks
// that the scratch is device memory of the operands' allocator, used in
// place rather than staged from host memory; over host operands (the
// harness's) it stays host memory. The fake GPU's new buffers hold
// garbage, so an index-error flag that was not cleared shows.
func TestScratchComesFromTheDeviceAllocator(t *testing.T) {
	h, g := newFakeHost(t, testConfig())
	g.dirty = true
	dev := func(dt array.DType, shape ...int) View {
		n := 1
		for _, d := range shape {
			n *= d
		}
		st, err := h.alloc(n * dt.Size())
		if err != nil {
			t.Fatal(err)
		}
		return View{Mem: st, DType: dt, Shape: shape, Strides: strided.RowMajor(shape)}
	}
	host := func(dt array.DType, shape ...int) View {
		v := dev(dt, shape...)
		v.Mem = make(hostMem, len(v.Mem.Bytes()))
		return v
	}
	type planned struct {
		name string
		ls   []Launch
		chk  *IndexCheck
	}
	plans := func(mk func(dt array.DType, shape ...int) View) []planned {
		var ps []planned
		add := func(name string, ls []Launch, chk *IndexCheck, err error) {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ps = append(ps, planned{name, ls, chk})
		}
		ls, err := Reduce(opset.Sum, mk(array.Float32), mk(array.Float32, 20000), []int{0})
		add("Reduce", ls, nil, err)
		ls, err = Sort(mk(array.Float32, 2, 5000), mk(array.Float32, 2, 5000), 1)
		add("Sort", ls, nil, err)
		ls, err = MatMul(mk(array.Float16, 1, 3), mk(array.Float16, 1, 2000), mk(array.Float16, 2000, 3))
		add("MatMul", ls, nil, err)
		ls, chk, err := PutAlongAxis(mk(array.Float32, 3, 5), mk(array.Float32, 3, 5), mk(array.Int32, 3, 2), mk(array.Float32, 3, 2), 1)
		add("PutAlongAxis", ls, chk, err)
		ls, chk, err = ScatterAddAlongAxis(mk(array.Float16, 3, 5), mk(array.Int32, 3, 2), mk(array.Float16, 3, 2), 1)
		add("ScatterAddAlongAxis", ls, chk, err)
		ls, chk, err = Take(mk(array.Float32, 4), mk(array.Float32, 5), mk(array.Int32, 4), 0)
		add("Take", ls, chk, err)
		return ps
	}
	// scratch returns the memory of ps's launches that is none of the
	// operands'.
	for _, p := range plans(dev) {
		scratch := 0
		for _, l := range p.ls {
			for _, a := range l.Buffers {
				b := deviceBuf(a.Mem)
				if b == nil {
					t.Errorf("%s: kernel %s binds host memory (%T)", p.name, l.Kernel, a.Mem)
					continue
				}
				if b.cache != h.cache {
					t.Errorf("%s: kernel %s binds memory of another allocator", p.name, l.Kernel)
				}
				scratch++
			}
		}
		if p.chk != nil {
			if deviceBuf(p.chk.mem) == nil {
				t.Errorf("%s: the index-error flag is host memory", p.name)
			}
			if err := p.chk.Err(); err != nil {
				t.Errorf("%s: a fresh IndexCheck reports %v", p.name, err)
			}
		}
		if scratch == 0 {
			t.Errorf("%s: no launches", p.name)
		}
	}
	for _, p := range plans(host) {
		for _, l := range p.ls {
			for _, a := range l.Buffers {
				if deviceBuf(a.Mem) != nil {
					t.Errorf("%s over host memory: kernel %s binds device memory", p.name, l.Kernel)
				}
			}
		}
	}
}

// TestScratchRunsOutOfMemory: a plan whose scratch does not fit the
// memory limit fails with the allocator's error.
func TestScratchRunsOutOfMemory(t *testing.T) {
	cfg := testConfig()
	cfg.memLimit = 4 << 20
	h, _ := newFakeHost(t, cfg)
	st, err := h.alloc(4 * 3000 * 100)
	if err != nil {
		t.Fatal(err)
	}
	v := View{Mem: st, DType: array.Float32, Shape: []int{100, 3000}, Strides: []int{3000, 1}}
	// Sorting lines longer than a block needs 4 scratch buffers the size of
	// the input: more than the limit leaves.
	_, err = Sort(v, v, 1)
	wantErr(t, err, "metal.Alloc", "out of device memory")
}
