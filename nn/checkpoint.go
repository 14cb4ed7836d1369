package nn

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/safetensors"
)

// Save writes every array of model m (Parameters: trainable, frozen and
// state such as BatchNorm's running statistics) to a safetensors file at
// path under its dotted name. The file is replaced atomically
// (safetensors.Save): a failed save leaves the previous checkpoint whole.
func Save(path string, m any) error {
	var params map[string]*array.Array
	if err := array.Try(func() { params = Parameters(m) }); err != nil {
		return rename(err, "nn.Save")
	}
	return safetensors.Save(path, params, map[string]string{"format": "fathom.nn"})
}

// Load reads a checkpoint written by Save (or any safetensors file with
// the same names) into m, which must be a pointer. The file must hold
// exactly the arrays of m, each of its shape and dtype; otherwise Load
// returns an *array.Error that lists what differs (names missing from the
// file, names the model lacks, shapes and dtypes) and m is unchanged.
func Load(path string, m any) error {
	const op = "nn.Load"
	var params map[string]*array.Array
	if err := array.Try(func() { params = Parameters(m) }); err != nil {
		return rename(err, op)
	}
	got, _, err := safetensors.Load(path)
	if err != nil {
		return err
	}
	var diffs []string
	var missing, extra []string
	for _, n := range sortedNames(params) {
		a, ok := got[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		p := params[n]
		if !slices.Equal(a.Shape(), p.Shape()) || a.DType() != p.DType() {
			diffs = append(diffs, fmt.Sprintf("%q is %v %v in the file, %v %v in the model", n, a.DType(), a.Shape(), p.DType(), p.Shape()))
		}
	}
	for _, n := range sortedNames(got) {
		if _, ok := params[n]; !ok {
			extra = append(extra, n)
		}
	}
	if len(missing) > 0 {
		diffs = append(diffs, "missing from the file: "+strings.Join(quote(missing), ", "))
	}
	if len(extra) > 0 {
		diffs = append(diffs, "not in the model: "+strings.Join(quote(extra), ", "))
	}
	if len(diffs) > 0 {
		return array.Errorf(op, "%s does not fit the %T: %s", path, m, strings.Join(diffs, "; "))
	}
	return rename(Update(m, got), op)
}

// rename gives an *array.Error from a lower layer the name of op.
func rename(err error, op string) error {
	if e, ok := err.(*array.Error); ok {
		e.Op = op
	}
	return err
}

func sortedNames(m map[string]*array.Array) []string { return slices.Sorted(maps.Keys(m)) }

func quote(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
