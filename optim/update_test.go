package optim

import (
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
)

// TestCompiledUpdateMatchesUpdate runs every case of optim.json through a
// compiled update and an uncompiled one: the same bits at every step,
// PyTorch's values, one trace, and the parameter without a gradient
// passed through.
func TestCompiledUpdateMatchesUpdate(t *testing.T) {
	for i := range ref(t).Cases {
		c := &ref(t).Cases[i]
		t.Run(c.Name+"/"+c.DType, func(t *testing.T) {
			w := compile.NewWorker()
			defer w.Close()
			a, b := c.optimizer(t), c.optimizer(t)
			upd := CompileUpdate(a)
			defer upd.Release()
			pa, pb := c.Params.arrays(t), c.Params.arrays(t)
			frozen := pa["frozen"]
			for k, g := range c.Grads {
				var err error
				if pa, err = upd.CallOn(w, pa, g.arrays(t)); err != nil {
					t.Fatal(err)
				}
				pb = b.Update(pb, g.arrays(t))
				for _, name := range sortedKeys(pb) {
					if !slices.Equal(bitsOf(t, pa[name]), bitsOf(t, pb[name])) {
						t.Fatalf("step %d, %s: compiled and uncompiled differ", k+1, name)
					}
					if err := closeTo(values(t, pa[name]), c.Expected[k][name].Data, tol(pa[name].DType())); err != nil {
						t.Fatalf("step %d, %s: %v", k+1, name, err)
					}
				}
			}
			if pa["frozen"] != frozen {
				t.Error("the parameter without a gradient was replaced")
			}
			if n := w.Traces(); n != 1 {
				t.Errorf("%d traces, want 1", n)
			}
			if got := a.State()["step"].Item(); got != float64(len(c.Grads)) {
				t.Errorf("step count %v", got)
			}
		})
	}
}

func TestCompiledUpdateBadArguments(t *testing.T) {
	p := map[string]*array.Array{"w": array.FromSlice([]float32{1, 2})}
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"nil optimiser", func() { CompileUpdate(nil) }, "optim.CompileUpdate: nil optimiser"},
		{"unknown", func() { CompileUpdate(NewSGD(1)).Call(p, map[string]*array.Array{"v": p["w"]}) }, `gradient "v": no parameter`},
		{"shape", func() {
			CompileUpdate(NewSGD(1)).Call(p, map[string]*array.Array{"w": array.FromSlice([]float32{1, 2, 3})})
		}, `gradient "w" is float32 [3], its parameter float32 [2]`},
		{"literal", func() { (&CompiledUpdate{}).Call(p, p) }, "not made by CompileUpdate"},
	} {
		err := array.Try(tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
