package tree

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-go/fathom/array"
)

func newWalker(op string, write bool, leaf leafFunc) *walker {
	return &walker{op: op, write: write, leaf: leaf, onPath: map[pathKey]bool{}}
}

// run walks v; in write mode the root must let its leaves be set.
func (w *walker) run(v any) error {
	if v == nil {
		return array.Errorf(w.op, "nil tree")
	}
	rv := reflect.ValueOf(v)
	if w.write {
		switch rv.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		default:
			// a value with no leaves (a pooling layer) has nothing to write
			n := 0
			r := newWalker(w.op, false, func(Leaf) (*array.Array, error) { n++; return nil, nil })
			if err := r.run(v); err != nil || n == 0 {
				return err
			}
			return array.Errorf(w.op, "a %T cannot be written in place: pass a pointer to it", v)
		}
	}
	_, err := w.walk(rv, "", false, false)
	return err
}

// Leaves returns the leaves of v in a fixed order: struct fields in
// declaration order, slice and array elements by index, map entries by
// key (strings in byte order, integers by value). A bad tree panics with
// *array.Error.
func Leaves(v any) []Leaf {
	var out []Leaf
	w := newWalker("tree.Leaves", false, func(l Leaf) (*array.Array, error) {
		out = append(out, l)
		return nil, nil
	})
	if err := w.run(v); err != nil {
		panic(err)
	}
	return out
}

// Flatten returns the arrays of v by name. A bad tree panics with
// *array.Error. An array that v holds in two places is under both names.
func Flatten(v any) map[string]*array.Array {
	out := map[string]*array.Array{}
	w := newWalker("tree.Flatten", false, func(l Leaf) (*array.Array, error) {
		out[l.Path] = l.Array
		return nil, nil
	})
	if err := w.run(v); err != nil {
		panic(err)
	}
	return out
}

// Paths returns the names of v's leaves in the order of Leaves.
func Paths(v any) []string {
	ls := Leaves(v)
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Path
	}
	return out
}

// Update stores each array of leaves in v at its name, leaving the
// leaves it does not name as they are. v must be writable in place: a
// pointer, a map or a slice. A name that is not a leaf of v, a nil array
// and a bad tree are *array.Error, and then v is unchanged. Update does
// not compare shapes or dtypes (nn.Update does).
func Update(v any, leaves map[string]*array.Array) error {
	return update("tree.Update", v, leaves, false, nil)
}

// Unflatten stores the arrays of leaves in v by name, as Update does, but
// leaves must name every leaf of v: it is the inverse of Flatten.
func Unflatten(v any, leaves map[string]*array.Array) error {
	return update("tree.Unflatten", v, leaves, true, nil)
}

// CheckFunc judges storing array n at a leaf l of a tree; a non-nil error
// stops an update before anything is written.
type CheckFunc func(l Leaf, n *array.Array) error

// UpdateChecked is Update with a check of every array against the leaf
// it replaces, made for all of them before any is stored.
func UpdateChecked(v any, leaves map[string]*array.Array, check CheckFunc) error {
	return update("tree.Update", v, leaves, false, check)
}

func update(op string, v any, leaves map[string]*array.Array, all bool, check CheckFunc) error {
	for name, a := range leaves {
		if a == nil {
			return array.Errorf(op, "%q: nil array", name)
		}
	}
	seen := map[string]bool{}
	var missing []string
	// a first pass that writes nothing finds every unknown name and
	// failed check, so that a bad update leaves v unchanged
	w := newWalker(op, false, func(l Leaf) (*array.Array, error) {
		n, ok := leaves[l.Path]
		if !ok {
			if all {
				missing = append(missing, l.Path)
			}
			return nil, nil
		}
		seen[l.Path] = true
		if check != nil {
			if err := check(l, n); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	if err := w.run(v); err != nil {
		return err
	}
	if len(seen) != len(leaves) {
		var unknown []string
		for name := range leaves {
			if !seen[name] {
				unknown = append(unknown, name)
			}
		}
		slices.Sort(unknown)
		return array.Errorf(op, "no leaf named %s in the %T", quoteList(unknown), v)
	}
	if len(missing) > 0 {
		return array.Errorf(op, "no array given for %s", quoteList(missing))
	}
	w = newWalker(op, true, func(l Leaf) (*array.Array, error) { return leaves[l.Path], nil })
	return w.run(v)
}

// quoteList names up to ten names, and how many more there are.
func quoteList(names []string) string {
	const most = 10
	q := make([]string, 0, min(len(names), most))
	for _, n := range names[:min(len(names), most)] {
		q = append(q, `"`+n+`"`)
	}
	s := strings.Join(q, ", ")
	if len(names) > most {
		s += ", and " + strconv.Itoa(len(names)-most) + " more"
	}
	return s
}

// Map replaces every leaf of v by f(name, leaf), in place. f may return
// its argument to keep a leaf; a nil result is an *array.Error. v must be
// writable in place, as for Update.
func Map(v any, f func(path string, a *array.Array) *array.Array) error {
	const op = "tree.Map"
	if f == nil {
		return array.Errorf(op, "nil function")
	}
	// first compute every new leaf, then store them, so that a failure
	// leaves v unchanged
	news := map[string]*array.Array{}
	w := newWalker(op, false, func(l Leaf) (*array.Array, error) {
		n := f(l.Path, l.Array)
		if n == nil {
			return nil, array.Errorf(op, "%q: the function returned nil", l.Path)
		}
		news[l.Path] = n
		return nil, nil
	})
	if err := w.run(v); err != nil {
		return err
	}
	w = newWalker(op, true, func(l Leaf) (*array.Array, error) { return news[l.Path], nil })
	return w.run(v)
}

// Walk calls f for every value of v, sub-trees and leaves alike, with its
// name, before the values inside it: a struct reached through a pointer
// is seen as the pointer and then as the struct. A bad tree is an
// *array.Error. Package nn uses it to find the layers that have a
// training mode.
func Walk(v any, f func(path string, v reflect.Value)) error {
	w := newWalker("tree.Walk", false, func(Leaf) (*array.Array, error) { return nil, nil })
	w.node = f
	return w.run(v)
}
