// Package tree flattens Go values that hold arrays into maps of dotted
// names, and writes arrays back by name: the parameter trees of package
// nn, and of anything else (optimiser state, a pair of models) built from
// plain Go values.
//
// A tree is any Go value. Its leaves are the *array.Array values it holds
// in exported struct fields, elements of slices and arrays, values of maps
// with string or integer keys, and whatever pointers and interfaces in
// those places point to. A leaf's name joins the steps from the root with
// dots, as PyTorch's and MLX's state dicts do: "layers.0.weight" is the
// field Weight of element 0 of the field Layers.
//
// A struct field's step is its Go name in snake case (Weight -> "weight",
// RunningMean -> "running_mean", QKVProj -> "qkv_proj"), or the name of
// its `nn` tag: `nn:"w"` renames the field, `nn:"-"` leaves it out of the
// tree. Options follow the name after commas: `nn:",optional"` lets the
// field be nil (a missing bias; it is then not a leaf), and
// `nn:"running_mean,state"` marks its leaves as state rather than
// trainable parameters (package nn reads the mark; this package only
// reports it). Unexported fields and fields of other types (ints, floats,
// strings, funcs) are not part of the tree.
//
// A nil where an array or a sub-tree must be (a nil *array.Array field,
// pointer or interface not tagged optional, a nil in a slice or a map), a
// map key that is empty or holds a dot, a map whose key type is neither a
// string nor an integer, and a cycle are bad trees: Flatten and Leaves
// panic with *array.Error naming the leaf, and Update, Unflatten and Map
// return that error. Nil slices and maps are empty sub-trees.
package tree

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/fathom-go/fathom/array"
)

// Leaf is an array of a tree with its name.
type Leaf struct {
	// Path is the leaf's dotted name ("" for a tree that is one array).
	Path string
	// Array is the leaf.
	Array *array.Array
	// State is true when the struct field the leaf sits under (at any
	// depth) is tagged `nn:",state"`: state to save, not to train.
	State bool
	// Ptr is the place the leaf is stored when it has one (a struct
	// field or a slice or array element), nil for a map value: a stable
	// identity of the leaf's slot, which package nn uses to remember
	// frozen parameters.
	Ptr **array.Array
}

var arrayType = reflect.TypeFor[*array.Array]()

// maxDepth bounds the nesting of a tree, so that a cycle the walk cannot
// see (none are known) is still an error, not a stack overflow.
const maxDepth = 1000

// leafFunc sees every leaf. It returns the array to store in its place,
// or nil to leave it alone.
type leafFunc func(l Leaf) (*array.Array, error)

type walker struct {
	op    string
	write bool
	leaf  leafFunc
	node  func(path string, v reflect.Value)
	// onPath holds the pointers, maps and slices on the path from the
	// root to the current value: meeting one again is a cycle.
	onPath map[pathKey]bool
	depth  int
}

type pathKey struct {
	p uintptr
	t reflect.Type
}

func join(path, step string) string {
	if path == "" {
		return step
	}
	return path + "." + step
}

func (w *walker) errorf(path, format string, args ...any) error {
	where := "the root"
	if path != "" {
		where = strconv.Quote(path)
	}
	return array.Errorf(w.op, "%s: %s", where, fmt.Sprintf(format, args...))
}

// enter marks v as on the current path; it returns false for a cycle.
func (w *walker) enter(v reflect.Value) (pathKey, bool) {
	k := pathKey{v.Pointer(), v.Type()}
	if k.p == 0 {
		return k, true
	}
	if w.onPath[k] {
		return k, false
	}
	w.onPath[k] = true
	return k, true
}

// walk visits v, whose place is settable when v.CanSet(). It returns a
// replacement for v when v changed and cannot be set in place (a value
// inside an interface or a map), which the caller stores.
func (w *walker) walk(v reflect.Value, path string, state, optional bool) (reflect.Value, error) {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxDepth {
		return reflect.Value{}, w.errorf(path, "the tree is nested more than %d deep", maxDepth)
	}
	if w.node != nil && v.IsValid() {
		w.node(path, v)
	}
	if v.Type() == arrayType {
		a := v.Interface().(*array.Array)
		if a == nil {
			if optional {
				return reflect.Value{}, nil
			}
			return reflect.Value{}, w.errorf(path, "nil *array.Array where an array must be")
		}
		l := Leaf{Path: path, Array: a, State: state}
		if v.CanAddr() {
			l.Ptr = v.Addr().Interface().(**array.Array)
		}
		n, err := w.leaf(l)
		if err != nil || n == nil {
			return reflect.Value{}, err
		}
		nv := reflect.ValueOf(n)
		if v.CanSet() {
			v.Set(nv)
			return reflect.Value{}, nil
		}
		return nv, nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return reflect.Value{}, w.nilErr(v, path, optional)
		}
		k, ok := w.enter(v)
		if !ok {
			return reflect.Value{}, w.errorf(path, "cycle: a %v points back to a value it is inside", v.Type())
		}
		defer delete(w.onPath, k)
		_, err := w.walk(v.Elem(), path, state, false)
		return reflect.Value{}, err
	case reflect.Interface:
		if v.IsNil() {
			return reflect.Value{}, w.nilErr(v, path, optional)
		}
		e := v.Elem()
		if w.write && (e.Kind() == reflect.Struct || e.Kind() == reflect.Array) {
			e = copyOf(e)
			r, err := w.walk(e, path, state, false)
			if err != nil {
				return reflect.Value{}, err
			}
			if r.IsValid() {
				e = r
			}
			if v.CanSet() {
				v.Set(e)
				return reflect.Value{}, nil
			}
			return e, nil
		}
		r, err := w.walk(e, path, state, false)
		if err != nil || !r.IsValid() {
			return reflect.Value{}, err
		}
		if v.CanSet() {
			v.Set(r)
			return reflect.Value{}, nil
		}
		return r, nil
	case reflect.Struct:
		return w.walkStruct(v, path, state)
	case reflect.Slice, reflect.Array:
		if !mayHold(v.Type().Elem()) {
			return reflect.Value{}, nil
		}
		if v.Kind() == reflect.Slice && v.Len() > 0 {
			k, ok := w.enter(v)
			if !ok {
				return reflect.Value{}, w.errorf(path, "cycle: a %v holds itself", v.Type())
			}
			defer delete(w.onPath, k)
		}
		for i := range v.Len() {
			if _, err := w.walk(v.Index(i), join(path, strconv.Itoa(i)), state, false); err != nil {
				return reflect.Value{}, err
			}
		}
		return reflect.Value{}, nil
	case reflect.Map:
		return reflect.Value{}, w.walkMap(v, path, state)
	}
	return reflect.Value{}, nil
}

func (w *walker) nilErr(v reflect.Value, path string, optional bool) error {
	if optional {
		return nil
	}
	return w.errorf(path, "nil %v where a sub-tree must be (tag the field `nn:\",optional\"` if it may be absent)", v.Type())
}

func copyOf(v reflect.Value) reflect.Value {
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}

func (w *walker) walkStruct(v reflect.Value, path string, state bool) (reflect.Value, error) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || !mayHold(f.Type) {
			continue
		}
		name, opts, skip := fieldName(f)
		if skip {
			continue
		}
		r, err := w.walk(v.Field(i), join(path, name), state || slices.Contains(opts, "state"), slices.Contains(opts, "optional"))
		if err != nil {
			return reflect.Value{}, err
		}
		if r.IsValid() {
			// a field of a struct that is not addressable: the caller
			// copied it in write mode, so this does not happen
			return reflect.Value{}, w.errorf(join(path, name), "cannot be written")
		}
	}
	return reflect.Value{}, nil
}

func (w *walker) walkMap(v reflect.Value, path string, state bool) error {
	if v.Len() == 0 || !mayHold(v.Type().Elem()) {
		return nil
	}
	kt := v.Type().Key()
	if !isIntKind(kt.Kind()) && kt.Kind() != reflect.String {
		return w.errorf(path, "a %v: map keys must be strings or integers", v.Type())
	}
	k, ok := w.enter(v)
	if !ok {
		return w.errorf(path, "cycle: a %v holds itself", v.Type())
	}
	defer delete(w.onPath, k)
	keys := v.MapKeys()
	steps := make([]string, len(keys))
	for i, key := range keys {
		steps[i] = keyStep(key)
		if steps[i] == "" || strings.Contains(steps[i], ".") {
			return w.errorf(path, "map key %q is empty or holds a dot", steps[i])
		}
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareKeys(keys[a], keys[b]) })
	for _, i := range order {
		e := v.MapIndex(keys[i])
		if w.write && (e.Kind() == reflect.Struct || e.Kind() == reflect.Array) {
			e = copyOf(e)
		}
		r, err := w.walk(e, join(path, steps[i]), state, false)
		if err != nil {
			return err
		}
		switch {
		case r.IsValid():
			v.SetMapIndex(keys[i], r)
		case e.CanAddr():
			// a copied struct or array: store it whether or not it
			// changed; an unchanged copy is equal to the original
			v.SetMapIndex(keys[i], e)
		}
	}
	return nil
}

func isIntKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func keyStep(k reflect.Value) string {
	switch {
	case k.Kind() == reflect.String:
		return k.String()
	case k.CanInt():
		return strconv.FormatInt(k.Int(), 10)
	default:
		return strconv.FormatUint(k.Uint(), 10)
	}
}

func compareKeys(a, b reflect.Value) int {
	switch {
	case a.Kind() == reflect.String:
		return strings.Compare(a.String(), b.String())
	case a.CanInt():
		return cmp.Compare(a.Int(), b.Int())
	default:
		return cmp.Compare(a.Uint(), b.Uint())
	}
}

// mayHold reports whether a value of type t can hold an array: types made
// only of numbers, strings, funcs and channels are skipped without a look
// (and a map of such values needs no usable key type).
func mayHold(t reflect.Type) bool { return mayHoldSeen(t, map[reflect.Type]bool{}) }

func mayHoldSeen(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == arrayType {
		return true
	}
	if r, ok := seen[t]; ok {
		return r
	}
	// a recursive type holds an array if any of its parts does; assume
	// not while looking, and the part that does will say so
	seen[t] = false
	r := false
	switch t.Kind() {
	case reflect.Interface:
		r = true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		r = mayHoldSeen(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.IsExported() && mayHoldSeen(f.Type, seen) {
				r = true
				break
			}
		}
	}
	seen[t] = r
	return r
}

// fieldName returns a struct field's step in a name, its tag options and
// whether the field is left out.
func fieldName(f reflect.StructField) (name string, opts []string, skip bool) {
	tag, ok := f.Tag.Lookup("nn")
	if ok && tag == "-" {
		return "", nil, true
	}
	parts := strings.Split(tag, ",")
	name = parts[0]
	if name == "" {
		name = SnakeCase(f.Name)
	}
	return name, parts[1:], false
}

// SnakeCase returns the name of a Go field in a tree: its words in lower
// case joined by underscores (Weight -> "weight", RunningMean ->
// "running_mean", QKVProj -> "qkv_proj", Layer2Norm -> "layer2_norm").
func SnakeCase(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) {
			if i > 0 && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]) ||
				(unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(c))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}
