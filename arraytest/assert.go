package arraytest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/fathom-go/fathom/array"
)

// maxListed is how many differing elements a report lists: enough to show
// a pattern (a row, a stride, an edge), few enough to read.
const maxListed = 10

// AssertClose evaluates want and got and, unless they match, reports
// through t.Error how: a dtype or shape that differs, or the number of
// elements that differ beyond tol and the first ten of them, with their
// indices. A NaN matches a NaN, as in numpy's assert_allclose. The zero
// Tol stands for DefaultTol(want.DType()).
//
// msgAndArgs, if given, names what is compared at the start of the report:
// a format and its arguments, as for fmt.Sprintf (a first element that is
// not a string is printed as by fmt.Sprint). AssertClose returns
// whether the arrays matched, so that a test can stop at a mismatch.
func AssertClose(t testing.TB, want, got *array.Array, tol Tol, msgAndArgs ...any) bool {
	t.Helper()
	msg := describe(want, got, tol)
	if msg == "" {
		return true
	}
	if len(msgAndArgs) > 0 {
		format, ok := msgAndArgs[0].(string)
		if !ok {
			format = fmt.Sprint(msgAndArgs[0])
		}
		msg = fmt.Sprintf(format, msgAndArgs[1:]...) + ": " + msg
	}
	t.Error(msg)
	return false
}

// describe returns how got differs from want, or "" if they match.
func describe(want, got *array.Array, tol Tol) string {
	switch {
	case want == nil && got == nil:
		return ""
	case want == nil:
		return "want is a nil array, got " + got.DType().String() + " " + fmt.Sprint(got.Shape())
	case got == nil:
		return "got a nil array, want " + want.DType().String() + " " + fmt.Sprint(want.Shape())
	}
	var b strings.Builder
	if want.DType() != got.DType() {
		fmt.Fprintf(&b, "dtype: want %v, got %v\n", want.DType(), got.DType())
	}
	if !slices.Equal(want.Shape(), got.Shape()) {
		fmt.Fprintf(&b, "shape: want %v, got %v\n", want.Shape(), got.Shape())
	}
	if b.Len() > 0 {
		return strings.TrimSuffix(b.String(), "\n")
	}
	w, err := read(want)
	if err != nil {
		return "want: " + err.Error()
	}
	g, err := read(got)
	if err != nil {
		return "got: " + err.Error()
	}
	if tol == (Tol{}) {
		tol = DefaultTol(w.dtype)
	}
	var bad []int
	for i := range w.size() {
		if !w.close(g, i, tol, true) {
			bad = append(bad, i)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	fmt.Fprintf(&b, "%s %v: %d of %d elements differ beyond rtol %g, atol %g", w.dtype, w.shape, len(bad), w.size(), tol.Rtol, tol.Atol)
	if len(bad) > maxListed {
		fmt.Fprintf(&b, "; the first %d", maxListed)
		bad = bad[:maxListed]
	}
	b.WriteString(":\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  index\twant\tgot")
	for _, i := range bad {
		fmt.Fprintf(tw, "  %v\t%s\t%s\n", index(w.shape, i), w.format(i), g.format(i))
	}
	tw.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}
