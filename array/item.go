package array

import "unsafe"

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
	if err := a.Eval(); err != nil {
		return zero, err
	}
	d := a.data.Load()
	return *(*T)(unsafe.Pointer(&d.storage.bytes[d.offset*a.dtype.Size()])), nil
}
