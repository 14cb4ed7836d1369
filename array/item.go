package array

// ItemOf evaluates a one-element array and returns its value as T, which
// must be the Go type of the array's dtype (as for ToSlice). It is Item's
// typed sibling that returns an error instead of panicking: a nil array,
// a dtype that is not T's, an array of other than one element, or a
// failed evaluation (the error Eval returns).
func ItemOf[T Elem](a *Array) (T, error) {
	const op = "array.ItemOf"
	var zero T
	if a == nil {
		return zero, Errorf(op, "nil *Array")
	}
	if want := DTypeOf[T](); want != a.dtype {
		return zero, Errorf(op, "array has dtype %v, not %v", a.dtype, want)
	}
	if a.size != 1 {
		return zero, Errorf(op, "array of shape %v has %d elements, not 1", a.shape, a.size)
	}
	s, err := ToSlice[T](a)
	if err != nil {
		return zero, err
	}
	return s[0], nil
}
