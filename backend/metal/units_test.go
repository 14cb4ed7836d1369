package metal_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/backend/metal/internal/mslcpu"
)

// TestLibraryUnits checks the lazy split of the embedded libraries: the
// units of a library instantiate exactly the kernels the harness compiles
// from the whole of it, each kernel in one unit; every unit's source
// keeps the library's line numbers, lints clean and declares exactly its
// own kernels (so the host's unit for a kernel has it); and all units
// pass the syntax-only compile with Metal's address spaces.
func TestLibraryUnits(t *testing.T) {
	requireHarness(t)
	var all []mslcpu.Library
	total := 0
	for _, lib := range metal.Libraries() {
		full, err := metal.LibrarySource(lib)
		if err != nil {
			t.Fatal(err)
		}
		want, err := mslcpu.Kernels(mslcpu.Library{Name: lib, Source: full})
		if err != nil {
			t.Fatal(err)
		}
		units, err := metal.LibraryUnits(lib)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range units {
			got = append(got, u.Kernels...)
			if n, m := strings.Count(u.Source, "\n"), strings.Count(full, "\n"); n != m {
				t.Errorf("%s: %d lines, the library %d: line numbers moved", u.Name, n, m)
			}
			r := mslcpu.Lint(mslcpu.Library{Name: u.Name, Source: u.Source})
			if err := r.Err(); err != nil {
				t.Errorf("%s: %v", u.Name, err)
			}
			var declared []string
			for _, k := range r.Kernels {
				declared = append(declared, k.Name)
			}
			slices.Sort(declared)
			mine := slices.Sorted(slices.Values(u.Kernels))
			if !slices.Equal(declared, mine) {
				t.Errorf("%s instantiates %v, its split says %v", u.Name, declared, mine)
			}
			all = append(all, mslcpu.Library{Name: u.Name, Source: u.Source})
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the units hold %d kernels, the library %d", lib, len(got), len(want))
		}
		total += len(units)
		t.Logf("%s: %d kernels in %d units", lib, len(want), len(units))
	}
	if err := mslcpu.SyntaxCheck(all...); err != nil {
		t.Error(err)
	}
	t.Logf("%d units", total)
}

// TestSplitUnitsRejects feeds the instantiation-macro expander the
// mistakes it must not pass over silently.
func TestSplitUnitsRejects(t *testing.T) {
	good := "#define inst(op, tname, T) \\\n  instantiate_kernel(\"k_\" #op \"_\" tname, k, T, op)\n" +
		"#define inst_all(op) inst(op, \"float32\", float) \\\n  inst(op, \"int32\", int)\n" +
		"inst_all(Add)\ninstantiate_kernel(\"plain\", k, float, Sub)\n"
	units, err := metal.SplitUnits("good.metal", good)
	if err != nil {
		t.Fatal(err)
	}
	for i := range units {
		slices.Sort(units[i])
	}
	if want := [][]string{{"k_Add_float32", "k_Add_int32"}, {"plain"}}; !slices.EqualFunc(units, want, slices.Equal) {
		t.Errorf("units %v, want %v", units, want)
	}
	for _, c := range []struct{ body, want string }{
		{"instantiate_nothing(Add)\n", "bad.metal:1: unknown macro instantiate_nothing"},
		{"#define inst(a, b) instantiate_kernel(#a, k, b)\ninst(x)\n", "bad.metal:2: inst takes 2 arguments, given 1"},
		{"instantiate_kernel(\"a\", k, float)\ninstantiate_kernel(\"a\", k, int)\n", `bad.metal:2: kernel "a" instantiated twice`},
		{"instantiate_kernel(\"a\", k, float\n", "unbalanced parentheses"},
		{"instantiate_kernel(name, k, float)\n", "is not a string literal"},
		{"#define loop(a) loop(a)\nloop(x)\n", "macros nest too deep"},
	} {
		_, err := metal.SplitUnits("bad.metal", c.body)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
}

func TestSplitUnitsPlainKernels(t *testing.T) {
	units, err := metal.SplitUnits("plain.metal", "kernel void k(device float* x [[buffer(0)]]) {}\nregister_kernel(k)\n")
	if err != nil || len(units) != 1 || !slices.Equal(units[0], []string{"k"}) {
		t.Errorf("units %v, error %v; want [[k]]", units, err)
	}
}
