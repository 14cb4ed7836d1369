package array

import "fmt"

// Error is the error of a bad argument to an operation: a shape mismatch,
// an axis out of range, an unsupported dtype. Operations panic with a
// *Error at the call (the gonum/mat convention); Try turns that panic into
// an ordinary error. Op names the operation ("ops.Add").
type Error struct {
	Op  string
	Msg string
	// Err is the kind of failure where one applies (ErrOutOfMemory), so
	// that errors.Is can test for it; nil for a bad argument.
	Err error
}

func (e *Error) Error() string { return e.Op + ": " + e.Msg }

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns a *Error for op.
func Errorf(op, format string, args ...any) *Error {
	return &Error{Op: op, Msg: fmt.Sprintf(format, args...)}
}

// Panicf panics with a *Error for op. Operations use it to reject bad
// arguments at the call.
func Panicf(op, format string, args ...any) {
	panic(Errorf(op, format, args...))
}

// Try calls f and returns the *Error it panics with, if any. Other panics
// pass through unchanged: they are bugs, not bad input.
func Try(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}
