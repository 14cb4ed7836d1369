package tree_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/tree"
)

type lin struct {
	Weight *array.Array
	Bias   *array.Array `nn:",optional"`
}

type block struct {
	Norm    lin
	Attn    *lin
	scratch *array.Array //nolint:unused // unexported: not in the tree
}

type model struct {
	Layers      []block
	Heads       map[string]*lin
	Extra       map[int]*array.Array
	Pair        [2]*array.Array
	Any         any
	RunningMean *array.Array `nn:",state"`
	Renamed     *array.Array `nn:"w0"`
	Skipped     *array.Array `nn:"-"`
	Steps       int
	Name        string
}

func arr(v ...float32) *array.Array { return array.FromSlice(v) }

func newModel() *model {
	return &model{
		Layers: []block{
			{Norm: lin{Weight: arr(1), Bias: arr(2)}, Attn: &lin{Weight: arr(3)}},
			{Norm: lin{Weight: arr(4)}, Attn: &lin{Weight: arr(5), Bias: arr(6)}},
		},
		Heads:       map[string]*lin{"b": {Weight: arr(7)}, "a": {Weight: arr(8)}},
		Extra:       map[int]*array.Array{10: arr(9), 2: arr(10)},
		Pair:        [2]*array.Array{arr(11), arr(12)},
		Any:         lin{Weight: arr(13)},
		RunningMean: arr(14),
		Renamed:     arr(15),
		Skipped:     arr(16),
	}
}

func value(t *testing.T, a *array.Array) float32 {
	t.Helper()
	v, err := array.ToSlice[float32](a)
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestLeavesNamesAndOrder(t *testing.T) {
	m := newModel()
	want := []string{
		"layers.0.norm.weight", "layers.0.norm.bias", "layers.0.attn.weight",
		"layers.1.norm.weight", "layers.1.attn.weight", "layers.1.attn.bias",
		"heads.a.weight", "heads.b.weight", "extra.2", "extra.10", "pair.0", "pair.1",
		"any.weight", "running_mean", "w0",
	}
	wantVals := []float32{1, 2, 3, 4, 5, 6, 8, 7, 10, 9, 11, 12, 13, 14, 15}
	ls := tree.Leaves(m)
	if got := tree.Paths(m); !slices.Equal(got, want) {
		t.Fatalf("paths\n got %q\nwant %q", got, want)
	}
	for i, l := range ls {
		if v := value(t, l.Array); v != wantVals[i] {
			t.Errorf("%s = %v, want %v", l.Path, v, wantVals[i])
		}
		if l.State != (l.Path == "running_mean") {
			t.Errorf("%s: State %v", l.Path, l.State)
		}
		// map values and values inside interfaces have no slot;
		// everything else does
		if (l.Ptr == nil) != (strings.HasPrefix(l.Path, "extra.") || strings.HasPrefix(l.Path, "any.")) {
			t.Errorf("%s: Ptr %v", l.Path, l.Ptr)
		}
	}
	flat := tree.Flatten(m)
	if len(flat) != len(want) {
		t.Fatalf("Flatten has %d leaves, want %d", len(flat), len(want))
	}
	for i, n := range want {
		if v := value(t, flat[n]); v != wantVals[i] {
			t.Errorf("Flatten[%s] = %v, want %v", n, v, wantVals[i])
		}
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"Weight": "weight", "RunningMean": "running_mean", "QKVProj": "qkv_proj", "OutProj": "out_proj",
		"Layer2Norm": "layer2_norm", "W": "w", "HTTPServer": "http_server", "Conv1D": "conv1_d",
	} {
		if got := tree.SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUpdateWritesEveryKindOfPlace(t *testing.T) {
	m := newModel()
	news := map[string]*array.Array{}
	for i, n := range tree.Paths(m) {
		news[n] = arr(float32(100 + i))
	}
	if err := tree.Unflatten(m, news); err != nil {
		t.Fatal(err)
	}
	for n, a := range tree.Flatten(m) {
		if a != news[n] {
			t.Errorf("%s was not written", n)
		}
	}
	if value(t, m.Skipped) != 16 {
		t.Error("a field tagged - was written")
	}
	// the interface held a struct value: it must hold the new one
	if value(t, m.Any.(lin).Weight) != 112 {
		t.Errorf("interface leaf = %v", value(t, m.Any.(lin).Weight))
	}
}

func TestUpdateStructValuesInMaps(t *testing.T) {
	m := map[string]lin{"x": {Weight: arr(1)}, "y": {Weight: arr(2)}}
	if err := tree.Update(m, map[string]*array.Array{"y.weight": arr(5)}); err != nil {
		t.Fatal(err)
	}
	if value(t, m["y"].Weight) != 5 || value(t, m["x"].Weight) != 1 {
		t.Errorf("map of structs after update: x %v, y %v", value(t, m["x"].Weight), value(t, m["y"].Weight))
	}
}

func TestMap(t *testing.T) {
	m := newModel()
	err := tree.Map(m, func(path string, a *array.Array) *array.Array {
		return arr(2 * value(t, a))
	})
	if err != nil {
		t.Fatal(err)
	}
	if value(t, m.Layers[1].Attn.Bias) != 12 || value(t, m.Extra[10]) != 18 || value(t, m.Renamed) != 30 {
		t.Errorf("Map did not double the leaves")
	}
	before := tree.Flatten(m)
	err = tree.Map(m, func(path string, a *array.Array) *array.Array {
		if path == "pair.1" {
			return nil
		}
		return arr(0)
	})
	if !isTreeErr(err, "tree.Map", `"pair.1"`) {
		t.Fatalf("Map with a nil result: %v", err)
	}
	for n, a := range tree.Flatten(m) {
		if a != before[n] {
			t.Errorf("a failed Map changed %s", n)
		}
	}
}

func isTreeErr(err error, op string, parts ...string) bool {
	var e *array.Error
	if !errors.As(err, &e) || e.Op != op {
		return false
	}
	for _, p := range parts {
		if !strings.Contains(e.Msg, p) {
			return false
		}
	}
	return true
}

type node struct {
	W    *array.Array
	Next *node
}

type selfish struct {
	Items []any
}

func TestBadTrees(t *testing.T) {
	cyc := &node{W: arr(1)}
	cyc.Next = &node{W: arr(2), Next: cyc}
	loop := &selfish{Items: make([]any, 1)}
	loop.Items[0] = loop.Items
	mloop := map[string]any{}
	mloop["m"] = mloop
	cases := []struct {
		name  string
		v     any
		parts []string
	}{
		{"nil field", &lin{}, []string{`"weight"`, "nil *array.Array"}},
		{"nil in a slice", []*array.Array{arr(1), nil}, []string{`"1"`, "nil"}},
		{"nil pointer", &block{Norm: lin{Weight: arr(1)}}, []string{`"attn"`, "nil *tree_test.lin", "optional"}},
		{"nil interface in a map", map[string]any{"k": nil}, []string{`"k"`, "nil"}},
		{"pointer cycle", cyc, []string{`"next.next"`, "cycle"}},
		{"slice cycle", loop, []string{`"items.0"`, "cycle"}},
		{"map cycle", mloop, []string{`"m"`, "cycle"}},
		{"dotted key", map[string]*array.Array{"a.b": arr(1)}, []string{`"a.b"`, "dot"}},
		{"empty key", map[string]*array.Array{"": arr(1)}, []string{"empty"}},
		{"float key", map[float64]*array.Array{1: arr(1)}, []string{"map keys must be strings or integers"}},
		{"nil tree", nil, []string{"nil tree"}},
	}
	for _, c := range cases {
		err := array.Try(func() { tree.Flatten(c.v) })
		if !isTreeErr(err, "tree.Flatten", c.parts...) {
			t.Errorf("%s: Flatten: %v, want a tree.Flatten error with %q", c.name, err, c.parts)
		}
	}
	// a map of float keys with nothing array-like in it is not a tree
	// node at all, and so not an error
	type cfg struct{ Scale map[float64]string }
	if got := tree.Flatten(&cfg{Scale: map[float64]string{1: "x"}}); len(got) != 0 {
		t.Errorf("config map gave leaves %v", got)
	}
}

func TestUpdateErrorsLeaveTheTreeAlone(t *testing.T) {
	m := newModel()
	before := tree.Flatten(m)
	cases := []struct {
		name  string
		f     func() error
		op    string
		parts []string
	}{
		{"unknown name", func() error {
			return tree.Update(m, map[string]*array.Array{"layers.0.norm.weight": arr(0), "layers.2.bias": arr(0)})
		}, "tree.Update", []string{`"layers.2.bias"`, "no leaf"}},
		{"optional nil is not a leaf", func() error {
			return tree.Update(m, map[string]*array.Array{"layers.0.attn.bias": arr(0)})
		}, "tree.Update", []string{`"layers.0.attn.bias"`}},
		{"nil array", func() error {
			return tree.Update(m, map[string]*array.Array{"w0": nil})
		}, "tree.Update", []string{`"w0"`, "nil"}},
		{"missing for Unflatten", func() error {
			return tree.Unflatten(m, map[string]*array.Array{"w0": arr(0)})
		}, "tree.Unflatten", []string{`"layers.0.norm.weight"`, "no array given", "and 4 more"}},
		{"value root", func() error {
			return tree.Update(*m, map[string]*array.Array{"w0": arr(0)})
		}, "tree.Update", []string{"pass a pointer"}},
		{"failed check", func() error {
			return tree.UpdateChecked(m, map[string]*array.Array{"w0": arr(0), "pair.0": arr(0)},
				func(l tree.Leaf, n *array.Array) error {
					if l.Path == "pair.0" {
						return array.Errorf("check", "no")
					}
					return nil
				})
		}, "check", []string{"no"}},
	}
	for _, c := range cases {
		if err := c.f(); !isTreeErr(err, c.op, c.parts...) {
			t.Errorf("%s: %v, want a %s error with %q", c.name, err, c.op, c.parts)
		}
		for n, a := range tree.Flatten(m) {
			if a != before[n] {
				t.Errorf("%s: %s changed", c.name, n)
			}
		}
	}
}

func TestWalkSeesNodes(t *testing.T) {
	m := newModel()
	var paths []string
	if err := tree.Walk(m, func(p string, _ reflect.Value) { paths = append(paths, p) }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", "layers", "layers.0", "layers.0.attn", "heads.a", "any", "w0"} {
		if !slices.Contains(paths, p) {
			t.Errorf("Walk did not visit %q (visited %q)", p, paths)
		}
	}
}

func TestSingleArrayTree(t *testing.T) {
	a := arr(3)
	flat := tree.Flatten(a)
	if len(flat) != 1 || flat[""] != a {
		t.Fatalf("Flatten of one array: %v", flat)
	}
}
