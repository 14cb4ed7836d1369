// want-lint: recursion
// want-syntax: ok
//
// Metal allows no recursion, direct or mutual; C++ does.

inline uint factorial(uint n) { return n < 2 ? 1 : n * factorial(n - 1); }

inline bool is_odd(uint n);
inline bool is_even(uint n) { return n == 0 ? true : is_odd(n - 1); }
inline bool is_odd(uint n) { return n == 0 ? false : is_even(n - 1); }

kernel void recursive(device uint* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  x[i] = factorial(x[i]) + uint(is_even(i));
}
register_kernel(recursive)
