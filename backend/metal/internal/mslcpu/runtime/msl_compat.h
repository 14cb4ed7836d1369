// msl_compat.h - compile Metal Shading Language compute kernels as C++17 with
// clang and run them on the CPU with Metal's grid/threadgroup/simdgroup
// semantics, so that kernel logic can be unit-tested on Linux.
//
// How it works
//  * Address-space keywords become macros: device/thread -> nothing,
//    constant -> const, threadgroup -> function-static thread_local storage
//    (one copy per worker OS thread; a worker runs one threadgroup at a time).
//  * Kernel parameter attributes are rewritten by the preprocessor into
//    default arguments: `T p [[buffer(2)]]` becomes
//    `T p [[ ]] = ::msl::rt::arg_buffer(2)[::msl::rt::z[0]]`, and
//    `uint gid [[thread_position_in_grid]]` reads the current thread's
//    position. A kernel is therefore launched as `name()`; every parameter is
//    bound from the dispatch state of the calling fiber.
//  * Every thread of a threadgroup is a fiber (own stack; x86-64 uses a tiny
//    register-switch routine, other targets POSIX ucontext) on one worker OS thread.
//    threadgroup_barrier / simdgroup_barrier / simd_* collectives switch back
//    to a scheduler, which releases the waiting threads when all threads (of
//    the threadgroup, or of the simdgroup) have arrived. Threadgroups are
//    spread over a pool of OS threads.
//  * Vectors are clang ext_vector_type (swizzles, element-wise operators, the
//    same size/alignment as MSL: float3 is 16 bytes). Vector constructors such
//    as float4(a.xy, 0, 1) are function-like macros.
//  * half is _Float16 when the compiler supports it (clang >= 15 on x86-64),
//    otherwise a 16-bit storage class with float arithmetic (clang 14).
//
// fathom's copy of the team prototype (../shared/tools/msl), adapted for
// package mslcpu: a kernel registry (instantiate_kernel, register_kernel)
// so that one runner binary serves every kernel of its libraries, and
// workers whose fiber stacks persist across dispatches.
//
// Syntax-only mode (-DMSL_SYNTAX_ONLY, compiled with -fsyntax-only; see
// SyntaxCheck in package mslcpu): device, constant and threadgroup become
// distinct clang address spaces (__attribute__((address_space(N)))), so a
// pointer or reference passed where another address space is expected
// fails to compile as it would on Metal; kernel parameter attributes stay
// attributes (ignored), and instantiate_kernel explicitly instantiates each
// kernel as Metal's does. Nothing of a library runs in this mode.
//
// Include standard headers BEFORE this one: it defines macros named kernel,
// device, constant, thread, threadgroup, buffer(...), float4(...), ...
#ifndef MSL_COMPAT_H
#define MSL_COMPAT_H

#include <array>
#include <atomic>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <ucontext.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MSL_ASAN 1
#include <sanitizer/common_interface_defs.h>
#endif
#endif

#pragma clang diagnostic ignored "-Wunknown-attributes"

// ============================================================== scalar types
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;

namespace msl {
namespace rt {
constexpr float h2f_bits(uint16_t h) {
  uint32_t s = uint32_t(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, f = 0;
  if (e == 0) {
    if (m == 0) {
      f = s;
    } else {  // subnormal
      int ee = 113;
      while (!(m & 1024)) { m <<= 1; ee--; }
      f = s | (uint32_t(ee) << 23) | ((m & 1023) << 13);
    }
  } else if (e == 31) {
    f = s | 0x7f800000u | (m << 13);
  } else {
    f = s | ((e + 112) << 23) | (m << 13);
  }
  return __builtin_bit_cast(float, f);
}
constexpr uint16_t f2h_bits(float x) {  // round to nearest even
  uint32_t f = __builtin_bit_cast(uint32_t, x);
  uint32_t s = (f >> 16) & 0x8000, e = (f >> 23) & 255, m = f & 0x7fffff;
  if (e == 255) return uint16_t(s | 0x7c00 | (m ? 0x200 : 0));
  int ee = int(e) - 127 + 15;
  if (ee >= 31) return uint16_t(s | 0x7c00);
  if (ee <= 0) {
    if (ee < -10) return uint16_t(s);
    m |= 0x800000;
    int shift = 14 - ee;
    uint32_t hm = m >> shift, rem = m & ((1u << shift) - 1), half_ = 1u << (shift - 1);
    if (rem > half_ || (rem == half_ && (hm & 1))) hm++;
    return uint16_t(s | hm);
  }
  uint32_t hm = m >> 13, rem = m & 0x1fff;
  uint32_t r = s | (uint32_t(ee) << 10) | hm;
  if (rem > 0x1000 || (rem == 0x1000 && (hm & 1))) r++;
  return uint16_t(r);
}
}  // namespace rt
}  // namespace msl

#if defined(__FLT16_MANT_DIG__) && !defined(MSL_FORCE_SOFT_HALF)
#define MSL_NATIVE_HALF 1
typedef _Float16 half;
#elif defined(MSL_SYNTAX_ONLY)
// Syntax-only mode needs a scalar half (a struct cannot be copied out of
// another address space): clang's storage-only __fp16, whose arithmetic
// is float's (compile with -Xclang -fallow-half-arguments-and-returns).
#define MSL_NATIVE_HALF 1
typedef __fp16 half;
#else
#define MSL_NATIVE_HALF 0
// 16-bit storage, float arithmetic, rounded to half on every store/operation.
struct half {
  uint16_t bits;
  half() = default;
  constexpr half(float f) : bits(msl::rt::f2h_bits(f)) {}
  constexpr half(double d) : bits(msl::rt::f2h_bits(float(d))) {}
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>
  constexpr half(I i) : bits(msl::rt::f2h_bits(float(i))) {}
  constexpr operator float() const { return msl::rt::h2f_bits(bits); }
  half &operator+=(float o) { return *this = half(float(*this) + o); }
  half &operator-=(float o) { return *this = half(float(*this) - o); }
  half &operator*=(float o) { return *this = half(float(*this) * o); }
  half &operator/=(float o) { return *this = half(float(*this) / o); }
};
#define MSL_HALF_BINOP(op)                                                                 \
  template <class A, class B,                                                              \
            std::enable_if_t<std::is_same<A, half>::value && std::is_same<B, half>::value, \
                             int> = 0>                                                     \
  constexpr half operator op(A a, B b) {                                                   \
    return half(float(a) op float(b));                                                     \
  }
MSL_HALF_BINOP(+)
MSL_HALF_BINOP(-)
MSL_HALF_BINOP(*)
MSL_HALF_BINOP(/)
#undef MSL_HALF_BINOP
constexpr half operator-(half a) { return half(-float(a)); }
#endif

// ============================================================== vector types
namespace msl {
template <int N>
struct soft_halfv;

template <class E, int N>
struct vec_sel {
  typedef E type __attribute__((ext_vector_type(N)));
};
#if !MSL_NATIVE_HALF
template <int N>
struct vec_sel<half, N> {
  typedef soft_halfv<N> type;
};
#endif
template <class E, int N>
using vec = typename vec_sel<E, N>::type;

// vec_info<T>: component count and element type for scalars and vectors
template <class T>
struct vec_info {
  static constexpr int n = 1;
  typedef T elem;
  static constexpr bool is_vec = false;
};
template <class E, int N>
struct vec_info<E __attribute__((ext_vector_type(N)))> {
  static constexpr int n = N;
  typedef E elem;
  static constexpr bool is_vec = true;
};
template <int N>
struct vec_info<soft_halfv<N>> {
  static constexpr int n = N;
  typedef half elem;
  static constexpr bool is_vec = true;
};

#if !MSL_NATIVE_HALF
template <int N>
struct alignas(N == 3 ? 8 : 2 * N) soft_halfv {
  union {
    half v[N == 3 ? 4 : N];
    struct {
      half x, y;
    };
  };
  half &operator[](int i) { return v[i]; }
  const half &operator[](int i) const { return v[i]; }
#define MSL_SOFTV_OP(op)                                        \
  friend soft_halfv operator op(soft_halfv a, soft_halfv b) {   \
    soft_halfv r{};                                             \
    for (int i = 0; i < N; i++) r.v[i] = half(float(a.v[i]) op float(b.v[i])); \
    return r;                                                   \
  }                                                             \
  friend soft_halfv operator op(soft_halfv a, float b) {        \
    soft_halfv r{};                                             \
    for (int i = 0; i < N; i++) r.v[i] = half(float(a.v[i]) op b); \
    return r;                                                   \
  }
  MSL_SOFTV_OP(+)
  MSL_SOFTV_OP(-)
  MSL_SOFTV_OP(*)
  MSL_SOFTV_OP(/)
#undef MSL_SOFTV_OP
};
#endif

// make_vec<E,N>(args...): MSL vector constructor semantics.
template <class E, int N, class T>
inline void put_components(vec<E, N> &r, int &i, const T &a) {
  if constexpr (vec_info<T>::is_vec) {
    for (int k = 0; k < vec_info<T>::n; k++) r[i++] = E(a[k]);
  } else {
    r[i++] = E(a);
  }
}
template <class E, int N, class... A>
inline vec<E, N> make_vec(const A &...a) {
  vec<E, N> r{};
  if constexpr (sizeof...(A) == 0) {
    return r;
  } else if constexpr (sizeof...(A) == 1 && (!vec_info<A>::is_vec && ...)) {
    for (int i = 0; i < N; i++) r[i] = E(a...);  // splat
    return r;
  } else {
    static_assert((vec_info<A>::n + ...) == N,
                  "MSL vector constructor: wrong number of components");
    int i = 0;
    (put_components<E, N>(r, i, a), ...);
    return r;
  }
}
}  // namespace msl

// Plain ext_vector typedefs (same canonical types as msl::vec<T,N>) so that
// clang's diagnostics say 'float3' rather than 'vec<float, 3>'.
#define MSL_VEC_TYPES(T, name)                           \
  typedef T name##2 __attribute__((ext_vector_type(2))); \
  typedef T name##3 __attribute__((ext_vector_type(3))); \
  typedef T name##4 __attribute__((ext_vector_type(4)));
MSL_VEC_TYPES(float, float)
#if MSL_NATIVE_HALF
MSL_VEC_TYPES(half, half)
#else
typedef msl::vec<half, 2> half2;
typedef msl::vec<half, 3> half3;
typedef msl::vec<half, 4> half4;
#endif
MSL_VEC_TYPES(int, int)
MSL_VEC_TYPES(uint, uint)
MSL_VEC_TYPES(short, short)
MSL_VEC_TYPES(ushort, ushort)
MSL_VEC_TYPES(char, char)
MSL_VEC_TYPES(uchar, uchar)
MSL_VEC_TYPES(long, long)
MSL_VEC_TYPES(ulong, ulong)
// clang < 15 has no bool ext-vectors: boolN are int vectors (what float
// comparisons return).
MSL_VEC_TYPES(int, bool)
#undef MSL_VEC_TYPES
struct packed_float3 {
  float x, y, z;
  operator float3() const { return float3{x, y, z}; }
};

// ================================================================== runtime
namespace msl {
namespace rt {

constexpr int kMaxBuffers = 31;
constexpr int kSimdWidth = 32;  // Apple GPUs: thread_execution_width == 32
constexpr int kMaxThreadsPerThreadgroup = 1024;

enum State : int { RUNNABLE, AT_BARRIER, AT_SIMD, DONE };

struct Site {
  const char *file = "";
  int line = 0, col = 0;
};
inline bool same_site(const Site &a, const Site &b) {
  return a.line == b.line && a.col == b.col && std::strcmp(a.file, b.file) == 0;
}
inline bool site_before(const Site &a, const Site &b) {
  return a.line != b.line ? a.line < b.line : a.col < b.col;
}

// ---- execution contexts. x86-64: a 20-instruction switch that saves only the
// callee-saved registers (no signal-mask syscall); elsewhere, or with
// -DMSL_USE_UCONTEXT: POSIX ucontext (makecontext/swapcontext).
#if defined(__x86_64__) && !defined(MSL_USE_UCONTEXT)
#define MSL_FAST_SWITCH 1
struct Ctx {
  void *sp;
};
__attribute__((naked, noinline)) static void msl_switch_x64(void ** /*save_sp*/, void * /*load_sp*/) {
  __asm__ volatile(
      "pushq %rbp\n\t"
      "pushq %rbx\n\t"
      "pushq %r12\n\t"
      "pushq %r13\n\t"
      "pushq %r14\n\t"
      "pushq %r15\n\t"
      "subq $8, %rsp\n\t"
      "stmxcsr (%rsp)\n\t"
      "fnstcw 4(%rsp)\n\t"
      "movq %rsp, (%rdi)\n\t"
      "movq %rsi, %rsp\n\t"
      "ldmxcsr (%rsp)\n\t"
      "fldcw 4(%rsp)\n\t"
      "addq $8, %rsp\n\t"
      "popq %r15\n\t"
      "popq %r14\n\t"
      "popq %r13\n\t"
      "popq %r12\n\t"
      "popq %rbx\n\t"
      "popq %rbp\n\t"
      "ret\n\t");
}
inline void ctx_switch(Ctx *from, Ctx *to) { msl_switch_x64(&from->sp, to->sp); }
inline void ctx_make(Ctx *c, char *stack, size_t size, void (*entry)()) {
  uint64_t *sp = reinterpret_cast<uint64_t *>(reinterpret_cast<uintptr_t>(stack + size) & ~uintptr_t(15));
  *--sp = 0;                                     // entry's (unused) return address
  *--sp = reinterpret_cast<uint64_t>(entry);     // popped by `ret`
  for (int i = 0; i < 6; i++) *--sp = 0;         // rbp rbx r12 r13 r14 r15
  *--sp = 0x1F80ull | (0x037Full << 32);         // default MXCSR, x87 control word
  c->sp = sp;
}
#else
#define MSL_FAST_SWITCH 0
struct Ctx {
  ucontext_t uc;
};
inline void ctx_switch(Ctx *from, Ctx *to) { swapcontext(&from->uc, &to->uc); }
inline void ctx_make(Ctx *c, char *stack, size_t size, void (*entry)()) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = stack;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = nullptr;
  makecontext(&c->uc, entry, 0);
}
#endif

struct Fiber;
typedef void (*SimdFn)(Fiber **lanes /*[kSimdWidth], nullptr = inactive*/);

struct Fiber {
  Ctx ctx;
  char *stack = nullptr;
  size_t stack_size = 0;
  State state = DONE;
  Site site;
  // built-in values
  vec<uint, 3> tpig, tpitg, tgpig, tptg, dtptg, tpgrid, tgpgrid;
  uint tiitg = 0, sgitg = 0, tiisg = 0, sgptg = 0;
  // simd collective exchange area
  SimdFn simd_fn = nullptr;
  int iarg = 0;
  alignas(64) unsigned char in[64];
  alignas(64) unsigned char out[64];
#ifdef MSL_ASAN
  void *fake_stack = nullptr;
#endif
};

struct Binding {
  void *ptr = nullptr;
  size_t len = 0;
  bool bound = false;
  std::vector<unsigned char> bytes;  // setBytes copy
};

struct Dispatch {
  void (*thunk)() = nullptr;
  const char *kernel_name = "";
  Binding *buffers = nullptr;
  vec<uint, 3> groups, tptg, grid;
  bool uniform = true;  // dispatchThreadgroups (true) or dispatchThreads (false)
  std::atomic<uint64_t> next{0};
  uint64_t total = 0;
  bool strict = false;
  int schedule = 0;  // MSL_SCHEDULE: 0 forward, 1 reverse, 2 shuffled (exposes more missing barriers)
  std::atomic<int> warned_exit_barrier{0};
};

inline Dispatch *&current_dispatch() {
  static Dispatch *d = nullptr;
  return d;
}

struct Worker {
  Ctx sched;
  std::vector<Fiber> fibers;
  char *stacks = nullptr;
  size_t stack_size = 0, nstacks = 0;
  Fiber *cur = nullptr;
#ifdef MSL_ASAN
  const void *sched_bottom = nullptr;
  size_t sched_size = 0;
#endif
  ~Worker() {
    if (stacks) munmap(stacks, stack_size * nstacks);
  }
};
inline thread_local Worker *tls_worker = nullptr;

[[noreturn]] inline void fatal(const char *fmt, const char *a = "", long b = 0, long c = 0,
                               long d = 0) {
  std::fprintf(stderr, "msl_compat: ");
  std::fprintf(stderr, fmt, a, b, c, d);
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  std::abort();
}

inline Fiber *cur_fiber() {
  Worker *w = tls_worker;
  if (!w || !w->cur) fatal("%sMSL builtin or barrier used outside a kernel dispatch");
  return w->cur;
}

// ---- fiber switching (with AddressSanitizer annotations when enabled)
inline void fiber_main() {
  Worker *w = tls_worker;
  Fiber *f = w->cur;
#ifdef MSL_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &w->sched_bottom, &w->sched_size);
#endif
  current_dispatch()->thunk();
  f->state = DONE;
#ifdef MSL_ASAN
  __sanitizer_start_switch_fiber(nullptr, w->sched_bottom, w->sched_size);
#endif
  ctx_switch(&f->ctx, &w->sched);  // never resumed
}

inline void resume(Worker &w, Fiber &f) {
  w.cur = &f;
#ifdef MSL_ASAN
  void *fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f.stack, f.stack_size);
#endif
  ctx_switch(&w.sched, &f.ctx);
#ifdef MSL_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  w.cur = nullptr;
}

inline void yield(State s, const Site &site) {
  Worker *w = tls_worker;
  Fiber *f = w->cur;
  f->state = s;
  f->site = site;
#ifdef MSL_ASAN
  __sanitizer_start_switch_fiber(&f->fake_stack, w->sched_bottom, w->sched_size);
#endif
  ctx_switch(&f->ctx, &w->sched);
#ifdef MSL_ASAN
  __sanitizer_finish_switch_fiber(f->fake_stack, &w->sched_bottom, &w->sched_size);
#endif
}

inline size_t env_size(const char *name, size_t def) {
  const char *v = std::getenv(name);
  return v && *v ? size_t(std::strtoull(v, nullptr, 0)) : def;
}

inline void prepare_worker(Worker &w, size_t n) {
  if (w.nstacks < n) {
    if (w.stacks) munmap(w.stacks, w.stack_size * w.nstacks);
#ifdef MSL_ASAN
    w.stack_size = env_size("MSL_FIBER_STACK", 256 << 10);
#else
    w.stack_size = env_size("MSL_FIBER_STACK", 64 << 10);
#endif
    void *p = mmap(nullptr, w.stack_size * n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) fatal("%smmap of fiber stacks failed");
    w.stacks = (char *)p;
    w.nstacks = n;
    w.fibers.resize(n);
  }
}

inline const char *state_name(State s) {
  switch (s) {
    case RUNNABLE: return "running";
    case AT_BARRIER: return "threadgroup_barrier";
    case AT_SIMD: return "simd collective";
    default: return "exited";
  }
}

// Runs all threads of one threadgroup to completion.
inline void run_threadgroup(Worker &w, Dispatch &d, vec<uint, 3> g) {
  vec<uint, 3> tg = d.tptg;
  if (!d.uniform) {  // dispatchThreads: partial threadgroups at the grid edge
    for (int k = 0; k < 3; k++) {
      uint start = g[k] * d.tptg[k];
      tg[k] = std::min<uint>(d.tptg[k], d.grid[k] - start);
    }
  }
  const uint n = tg.x * tg.y * tg.z;
  const uint nsg = (n + kSimdWidth - 1) / kSimdWidth;
  prepare_worker(w, n);
  for (uint i = 0; i < n; i++) {
    Fiber &f = w.fibers[i];
    f.tpitg = vec<uint, 3>{i % tg.x, (i / tg.x) % tg.y, i / (tg.x * tg.y)};
    f.tgpig = g;
    f.tpig = g * d.tptg + f.tpitg;
    f.tptg = tg;
    f.dtptg = d.tptg;
    f.tpgrid = d.grid;
    f.tgpgrid = d.groups;
    f.tiitg = i;
    f.sgitg = i / kSimdWidth;
    f.tiisg = i % kSimdWidth;
    f.sgptg = nsg;
    f.state = RUNNABLE;
    f.stack = w.stacks + size_t(i) * w.stack_size;
    f.stack_size = w.stack_size;
    ctx_make(&f.ctx, f.stack, f.stack_size, fiber_main);
  }
  // order in which runnable threads are resumed between sync points
  static thread_local std::vector<uint> order;
  order.resize(n);
  for (uint i = 0; i < n; i++) order[i] = d.schedule == 1 ? n - 1 - i : i;
  if (d.schedule == 2) {
    uint64_t r = 0x9E3779B97F4A7C15ull ^ (uint64_t(g.x) << 32) ^ (uint64_t(g.y) << 16) ^ g.z;
    for (uint i = n; i > 1; i--) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      std::swap(order[i - 1], order[r % i]);
    }
  }
  uint done = 0;
  for (;;) {
    for (uint oi = 0; oi < n; oi++) {
      Fiber &f = w.fibers[order[oi]];
      if (f.state != RUNNABLE) continue;
      resume(w, f);
      if (f.state == DONE) done++;
    }
    if (done == n) return;
    // 1. simd collectives: per simdgroup, the lanes waiting at the earliest
    //    call site form the active set (exact for uniform control flow;
    //    a heuristic for divergent simd calls).
    bool progressed = false;
    for (uint s = 0; s < nsg; s++) {
      Fiber *best = nullptr;
      uint lo = s * kSimdWidth, hi = std::min(n, lo + kSimdWidth);
      for (uint i = lo; i < hi; i++) {
        Fiber &f = w.fibers[i];
        if (f.state == AT_SIMD && (!best || site_before(f.site, best->site))) best = &f;
      }
      if (!best) continue;
      Fiber *lanes[kSimdWidth] = {};
      for (uint i = lo; i < hi; i++) {
        Fiber &f = w.fibers[i];
        if (f.state == AT_SIMD && same_site(f.site, best->site)) {
          if (f.simd_fn != best->simd_fn)
            fatal("%s:%ld: different simd functions at one call site", f.site.file, f.site.line);
          lanes[f.tiisg] = &f;
        }
      }
      best->simd_fn(lanes);
      for (Fiber *f : lanes)
        if (f) f->state = RUNNABLE;
      progressed = true;
    }
    if (progressed) continue;
    // 2. threadgroup barrier: every thread that has not exited must wait at
    //    the same barrier.
    Fiber *first = nullptr;
    for (uint i = 0; i < n; i++) {
      Fiber &f = w.fibers[i];
      if (f.state != AT_BARRIER) continue;
      if (!first) {
        first = &f;
      } else if (!same_site(f.site, first->site)) {
        fatal("%s:%ld vs line %ld: divergent threadgroup_barrier: threads of one threadgroup wait at different barriers",
              f.site.file, f.site.line, first->site.line);
      }
    }
    if (!first) fatal("%sinternal scheduler error: no runnable thread");
    if (done > 0) {
      if (d.strict)
        fatal("%s:%ld: threadgroup_barrier reached after %ld thread(s) of the threadgroup exited (MSL_STRICT)",
              first->site.file, first->site.line, long(done));
      if (d.warned_exit_barrier.exchange(1) == 0)
        std::fprintf(stderr,
                     "msl_compat: warning: %s:%d: threadgroup_barrier reached after some threads of the "
                     "threadgroup returned (undefined in MSL; set MSL_STRICT=1 to fail)\n",
                     first->site.file, first->site.line);
    }
    for (uint i = 0; i < n; i++)
      if (w.fibers[i].state == AT_BARRIER) w.fibers[i].state = RUNNABLE;
  }
}

inline void worker_loop(Dispatch &d, Worker &w) {
  tls_worker = &w;
  for (;;) {
    uint64_t i = d.next.fetch_add(1);
    if (i >= d.total) break;
    vec<uint, 3> g{uint(i % d.groups.x), uint((i / d.groups.x) % d.groups.y),
                   uint(i / (uint64_t(d.groups.x) * d.groups.y))};
    run_threadgroup(w, d, g);
  }
  tls_worker = nullptr;
}

// ---- kernel parameter binding (targets of the attribute macros)
constexpr int z[1] = {0};

struct BufRef {
  void *p;
  template <class T>
  operator T *() const { return static_cast<T *>(p); }
  template <class T>
  operator T &() const { return *static_cast<T *>(p); }
};
struct BufSel {
  int idx;
  BufRef operator[](int) const {
    Dispatch *d = current_dispatch();
    if (idx < 0 || idx >= kMaxBuffers || !d->buffers[idx].bound)
      fatal("kernel %s: parameter [[buffer(%ld)]] is not bound", d->kernel_name, idx);
    return BufRef{d->buffers[idx].ptr};
  }
};
inline BufSel arg_buffer(int idx) { return BufSel{idx}; }

enum Builtin {
  TPIG, TPITG, TGPIG, TPTG, DTPTG, TPGRID, TGPGRID, TIITG, SGITG, TIISG, SGPTG, TPSG, ZERO
};
struct BuiltinVal {
  vec<uint, 3> v;
  template <class T>
  operator T() const {
    if constexpr (vec_info<T>::is_vec) {
      T r{};
      for (int i = 0; i < vec_info<T>::n && i < 3; i++) r[i] = typename vec_info<T>::elem(v[i]);
      return r;
    } else {
      return T(v.x);
    }
  }
};
struct BuiltinSel {
  Builtin b;
  BuiltinVal operator[](int) const {
    Fiber *f = cur_fiber();
    auto s = [](uint x) { return vec<uint, 3>{x, 0, 0}; };
    switch (b) {
      case TPIG: return {f->tpig};
      case TPITG: return {f->tpitg};
      case TGPIG: return {f->tgpig};
      case TPTG: return {f->tptg};
      case DTPTG: return {f->dtptg};
      case TPGRID: return {f->tpgrid};
      case TGPGRID: return {f->tgpgrid};
      case TIITG: return {s(f->tiitg)};
      case SGITG: return {s(f->sgitg)};
      case TIISG: return {s(f->tiisg)};
      case SGPTG: return {s(f->sgptg)};
      case TPSG: return {s(kSimdWidth)};
      default: return {vec<uint, 3>{0, 0, 0}};
    }
  }
};
inline BuiltinSel builtin(Builtin b) { return BuiltinSel{b}; }

template <class T>
inline T load_slot(const unsigned char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
inline void store_slot(unsigned char *p, const T &v) {
  std::memcpy(p, &v, sizeof(T));
}

// Calls a simd collective: deposit x, wait for the simdgroup, read result.
template <class T>
inline T simd_collective(SimdFn fn, const T &x, int iarg, const Site &site) {
  static_assert(sizeof(T) <= 64, "simd value too large");
  Fiber *f = cur_fiber();
  store_slot(f->in, x);
  f->simd_fn = fn;
  f->iarg = iarg;
  yield(AT_SIMD, site);
  return load_slot<T>(f->out);
}

}  // namespace rt

// ================================================================ host API
struct Size {
  uint64_t width = 1, height = 1, depth = 1;
};

// A compute command encoder look-alike: bind buffers, then dispatch.
class ComputeEncoder {
 public:
  // setBuffer:offset:atIndex:
  void set_buffer(void *base, size_t offset, int index) {
    check_index(index);
    rt::Binding &b = buffers_[index];
    b.ptr = static_cast<char *>(base) + offset;
    b.bytes.clear();
    b.bound = true;
  }
  // setBytes:length:atIndex: (copied, like Metal)
  void set_bytes(const void *p, size_t len, int index) {
    check_index(index);
    rt::Binding &b = buffers_[index];
    b.bytes.assign(static_cast<const unsigned char *>(p), static_cast<const unsigned char *>(p) + len);
    b.bytes.resize(len + 16);
    b.ptr = b.bytes.data();
    b.len = len;
    b.bound = true;
  }
  template <class T>
  void set_value(const T &v, int index) { set_bytes(&v, sizeof(T), index); }

  // dispatchThreadgroups:threadsPerThreadgroup:
  void dispatch_threadgroups(void (*kernel)(), Size groups, Size tptg, const char *name = "kernel") {
    run(kernel, name, groups, tptg,
        Size{groups.width * tptg.width, groups.height * tptg.height, groups.depth * tptg.depth}, true);
  }
  // dispatchThreads:threadsPerThreadgroup: (non-uniform threadgroups)
  void dispatch_threads(void (*kernel)(), Size grid, Size tptg, const char *name = "kernel") {
    Size groups{(grid.width + tptg.width - 1) / tptg.width, (grid.height + tptg.height - 1) / tptg.height,
                (grid.depth + tptg.depth - 1) / tptg.depth};
    run(kernel, name, groups, tptg, grid, false);
  }

 private:
  rt::Binding buffers_[rt::kMaxBuffers];
  static void check_index(int i) {
    if (i < 0 || i >= rt::kMaxBuffers) rt::fatal("%sbuffer index %ld out of range [0,31)", "", i);
  }
  void run(void (*kernel)(), const char *name, Size groups, Size tptg, Size grid, bool uniform) {
    uint64_t nt = tptg.width * tptg.height * tptg.depth;
    if (nt == 0 || nt > uint64_t(rt::kMaxThreadsPerThreadgroup))
      rt::fatal("dispatch %s: %ld threads per threadgroup (must be 1..1024)", name, long(nt));
    rt::Dispatch d;
    d.thunk = kernel;
    d.kernel_name = name;
    d.buffers = buffers_;
    d.groups = vec<uint, 3>{uint(groups.width), uint(groups.height), uint(groups.depth)};
    d.tptg = vec<uint, 3>{uint(tptg.width), uint(tptg.height), uint(tptg.depth)};
    d.grid = vec<uint, 3>{uint(grid.width), uint(grid.height), uint(grid.depth)};
    d.uniform = uniform;
    d.total = groups.width * groups.height * groups.depth;
    d.strict = rt::env_size("MSL_STRICT", 0) != 0;
    if (const char *sch = std::getenv("MSL_SCHEDULE"))
      d.schedule = !std::strcmp(sch, "reverse") ? 1 : !std::strcmp(sch, "shuffle") ? 2 : 0;
    if (d.total == 0) return;
    rt::current_dispatch() = &d;
    size_t nw = rt::env_size("MSL_WORKERS", std::max(1u, std::thread::hardware_concurrency()));
    nw = std::max<size_t>(1, std::min<size_t>(nw, d.total));
    // Workers, and so their fiber stacks, outlive the dispatch: a runner
    // serves many dispatches, and fresh stacks would cost page faults for
    // every fiber of every dispatch.
    static std::vector<std::unique_ptr<rt::Worker>> workers;
    while (workers.size() < nw) workers.emplace_back(new rt::Worker);
    if (nw == 1) {
      rt::worker_loop(d, *workers[0]);
    } else {
      std::vector<std::thread> ts;
      for (size_t i = 0; i < nw; i++) {
        rt::Worker *w = workers[i].get();
        ts.emplace_back([&d, w] { rt::worker_loop(d, *w); });
      }
      for (auto &t : ts) t.join();
    }
    rt::current_dispatch() = nullptr;
  }
};
}  // namespace msl

// ============================================================ metal library
namespace metal {

#define MSL_SITE_PARAMS \
  const char *msl_file_ = __builtin_FILE(), int msl_line_ = __builtin_LINE(), int msl_col_ = __builtin_COLUMN()
#define MSL_SITE (::msl::rt::Site{msl_file_, msl_line_, msl_col_})

// ---- synchronization
enum class mem_flags : int {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
  mem_object_data = 16,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(int(a) | int(b)); }

inline void threadgroup_barrier(mem_flags, MSL_SITE_PARAMS) {
  ::msl::rt::yield(::msl::rt::AT_BARRIER, MSL_SITE);
}
namespace detail {
inline void op_nop(::msl::rt::Fiber **) {}
}  // namespace detail
inline void simdgroup_barrier(mem_flags, MSL_SITE_PARAMS) {
  ::msl::rt::simd_collective(&detail::op_nop, 0, 0, MSL_SITE);
}

// ---- element-wise helpers
namespace detail {
template <class T>
struct is_fp_elem : std::bool_constant<std::is_floating_point<T>::value || std::is_same<T, half>::value> {};
template <class T, class F>
inline T map1(const T &x, F f) {
  if constexpr (::msl::vec_info<T>::is_vec) {
    T r = x;
    for (int i = 0; i < ::msl::vec_info<T>::n; i++) r[i] = f(x[i]);
    return r;
  } else {
    return f(x);
  }
}
template <class T, class F>
inline T map2(const T &x, const T &y, F f) {
  if constexpr (::msl::vec_info<T>::is_vec) {
    T r = x;
    for (int i = 0; i < ::msl::vec_info<T>::n; i++) r[i] = f(x[i], y[i]);
    return r;
  } else {
    return f(x, y);
  }
}
template <class T, class F>
inline T map3(const T &x, const T &y, const T &z, F f) {
  if constexpr (::msl::vec_info<T>::is_vec) {
    T r = x;
    for (int i = 0; i < ::msl::vec_info<T>::n; i++) r[i] = f(x[i], y[i], z[i]);
    return r;
  } else {
    return f(x, y, z);
  }
}
}  // namespace detail

// Float functions: non-template overloads for float, half and their vectors
// (like the MSL headers), so overload resolution - including ambiguity
// errors such as exp(1) - behaves like the Metal compiler.
#define MSL_FP_TYPES(X, ...) \
  X(float, __VA_ARGS__)      \
  X(float2, __VA_ARGS__)     \
  X(float3, __VA_ARGS__)     \
  X(float4, __VA_ARGS__)     \
  X(half, __VA_ARGS__)       \
  X(half2, __VA_ARGS__)      \
  X(half3, __VA_ARGS__)      \
  X(half4, __VA_ARGS__)

#define MSL_DEF_UNARY(T, name, expr)                                                    \
  inline T name(T x) {                                                                 \
    using E = typename ::msl::vec_info<T>::elem;                                       \
    return detail::map1(x, [](E e) { float v = float(e); return E(expr); });          \
  }
#define MSL_DEF_BINARY(T, name, expr)                                                   \
  inline T name(T x, T y) {                                                            \
    using E = typename ::msl::vec_info<T>::elem;                                       \
    return detail::map2(x, y, [](E ex, E ey) { float a = float(ex), b = float(ey); return E(expr); }); \
  }
#define MSL_DEF_TERNARY(T, name, expr)                                                  \
  inline T name(T x, T y, T z) {                                                       \
    using E = typename ::msl::vec_info<T>::elem;                                       \
    return detail::map3(x, y, z, [](E ex, E ey, E ez) {                                \
      float a = float(ex), b = float(ey), c = float(ez);                               \
      return E(expr);                                                                  \
    });                                                                                \
  }

#define MSL_UNARY_LIST(X)                               \
  X(exp, __builtin_expf(v))                             \
  X(exp2, __builtin_exp2f(v))                           \
  X(exp10, __builtin_powf(10.0f, v))                    \
  X(log, __builtin_logf(v))                             \
  X(log2, __builtin_log2f(v))                           \
  X(log10, __builtin_log10f(v))                         \
  X(sqrt, __builtin_sqrtf(v))                           \
  X(rsqrt, 1.0f / __builtin_sqrtf(v))                   \
  X(sin, __builtin_sinf(v))                             \
  X(cos, __builtin_cosf(v))                             \
  X(tan, __builtin_tanf(v))                             \
  X(asin, __builtin_asinf(v))                           \
  X(acos, __builtin_acosf(v))                           \
  X(atan, __builtin_atanf(v))                           \
  X(sinh, __builtin_sinhf(v))                           \
  X(cosh, __builtin_coshf(v))                           \
  X(tanh, __builtin_tanhf(v))                           \
  X(asinh, __builtin_asinhf(v))                         \
  X(acosh, __builtin_acoshf(v))                         \
  X(atanh, __builtin_atanhf(v))                         \
  X(sinpi, __builtin_sinf(v * 3.14159265358979f))       \
  X(cospi, __builtin_cosf(v * 3.14159265358979f))       \
  X(floor, __builtin_floorf(v))                         \
  X(ceil, __builtin_ceilf(v))                           \
  X(round, __builtin_roundf(v))                         \
  X(rint, __builtin_rintf(v))                           \
  X(trunc, __builtin_truncf(v))                         \
  X(fract, __builtin_fminf(v - __builtin_floorf(v), 0x1.fffffep-1f)) \
  X(fabs, __builtin_fabsf(v))                           \
  X(saturate, __builtin_fminf(__builtin_fmaxf(v, 0.0f), 1.0f)) \
  X(sign, (v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v))

#define MSL_BINARY_LIST(X)                              \
  X(pow, __builtin_powf(a, b))                          \
  X(powr, __builtin_powf(a, b))                         \
  X(atan2, __builtin_atan2f(a, b))                      \
  X(fmin, __builtin_fminf(a, b))                        \
  X(fmax, __builtin_fmaxf(a, b))                        \
  X(fmod, __builtin_fmodf(a, b))                        \
  X(copysign, __builtin_copysignf(a, b))                \
  X(fdim, __builtin_fdimf(a, b))                        \
  X(step, (b < a ? 0.0f : 1.0f))

#define MSL_TERNARY_LIST(X)                             \
  X(fma, __builtin_fmaf(a, b, c))                       \
  X(mix, (a + (b - a) * c))                             \
  X(smoothstep, ([&] { float t = __builtin_fminf(__builtin_fmaxf((c - a) / (b - a), 0.0f), 1.0f); return t * t * (3.0f - 2.0f * t); }()))

#define MSL_GEN_UNARY(name, expr) MSL_FP_TYPES(MSL_DEF_UNARY, name, expr)
#define MSL_GEN_BINARY(name, expr) MSL_FP_TYPES(MSL_DEF_BINARY, name, expr)
#define MSL_GEN_TERNARY(name, expr) MSL_FP_TYPES(MSL_DEF_TERNARY, name, expr)
MSL_UNARY_LIST(MSL_GEN_UNARY)
MSL_BINARY_LIST(MSL_GEN_BINARY)
MSL_TERNARY_LIST(MSL_GEN_TERNARY)

// min/max/clamp for every scalar and vector type but the 64-bit integers,
// which Metal's min and max do not take: a call on long or ulong fails to
// compile here (a deleted function) as it would on a Mac.
#define MSL_ALL_TYPES(X)                                                              \
  X(float) X(float2) X(float3) X(float4) X(half) X(half2) X(half3) X(half4)          \
  X(int) X(int2) X(int3) X(int4) X(uint) X(uint2) X(uint3) X(uint4)                  \
  X(short) X(short2) X(short3) X(short4) X(ushort) X(ushort2) X(ushort3) X(ushort4)  \
  X(char) X(char2) X(char3) X(char4) X(uchar) X(uchar2) X(uchar3) X(uchar4)
#define MSL_DEF_MINMAX(T)                                                               \
  inline T min(T x, T y) {                                                              \
    using E = typename ::msl::vec_info<T>::elem;                                        \
    return detail::map2(x, y, [](E a, E b) {                                            \
      if constexpr (detail::is_fp_elem<E>::value) return E(__builtin_fminf(float(a), float(b))); \
      else return b < a ? b : a;                                                        \
    });                                                                                 \
  }                                                                                     \
  inline T max(T x, T y) {                                                              \
    using E = typename ::msl::vec_info<T>::elem;                                        \
    return detail::map2(x, y, [](E a, E b) {                                            \
      if constexpr (detail::is_fp_elem<E>::value) return E(__builtin_fmaxf(float(a), float(b))); \
      else return a < b ? b : a;                                                        \
    });                                                                                 \
  }                                                                                     \
  inline T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
MSL_ALL_TYPES(MSL_DEF_MINMAX)
long min(long, long) = delete;     // Metal has no 64-bit min: min64 (common.h)
long max(long, long) = delete;     // Metal has no 64-bit max: max64 (common.h)
ulong min(ulong, ulong) = delete;  // Metal has no 64-bit min
ulong max(ulong, ulong) = delete;  // Metal has no 64-bit max
#define MSL_DEF_FABS(T, ...) \
  inline T abs(T x) { return fabs(x); }
MSL_FP_TYPES(MSL_DEF_FABS, )
// integer abs is a template, so that ::abs(int) from <cstdlib> wins ties
// instead of making abs(i) ambiguous
template <class T, std::enable_if_t<std::is_integral<typename ::msl::vec_info<T>::elem>::value, int> = 0>
inline T abs(T x) {
  using E = typename ::msl::vec_info<T>::elem;
  return detail::map1(x, [](E a) { if constexpr (std::is_signed<E>::value) return E(a < 0 ? -a : a); else return a; });
}
// vector-with-scalar forms of clamp (MSL has these)
#define MSL_DEF_CLAMP_S(T)                                                              \
  inline T clamp(T x, typename ::msl::vec_info<T>::elem lo, typename ::msl::vec_info<T>::elem hi) { \
    using E = typename ::msl::vec_info<T>::elem;                                        \
    constexpr int N = ::msl::vec_info<T>::n;                                            \
    return clamp(x, ::msl::make_vec<E, N>(lo), ::msl::make_vec<E, N>(hi));              \
  }
MSL_DEF_CLAMP_S(float2) MSL_DEF_CLAMP_S(float3) MSL_DEF_CLAMP_S(float4)
MSL_DEF_CLAMP_S(half2) MSL_DEF_CLAMP_S(half3) MSL_DEF_CLAMP_S(half4)

// ---- integer functions
template <class T, std::enable_if_t<std::is_integral<T>::value, int> = 0>
inline T popcount(T x) { return T(__builtin_popcountll((unsigned long long)(std::make_unsigned_t<T>)x)); }
template <class T, std::enable_if_t<std::is_integral<T>::value, int> = 0>
inline T clz(T x) {
  using U = std::make_unsigned_t<T>;
  return x == 0 ? T(sizeof(T) * 8) : T(__builtin_clzll((unsigned long long)(U)x) - (64 - 8 * int(sizeof(T))));
}
template <class T, std::enable_if_t<std::is_integral<T>::value, int> = 0>
inline T ctz(T x) { return x == 0 ? T(sizeof(T) * 8) : T(__builtin_ctzll((unsigned long long)(std::make_unsigned_t<T>)x)); }
inline uint mulhi(uint a, uint b) { return uint((uint64_t(a) * b) >> 32); }
inline int mulhi(int a, int b) { return int((int64_t(a) * b) >> 32); }

// ---- geometric / relational
template <class T, std::enable_if_t<::msl::vec_info<T>::is_vec, int> = 0>
inline auto dot(T a, T b) {
  using E = typename ::msl::vec_info<T>::elem;
  float s = 0;
  for (int i = 0; i < ::msl::vec_info<T>::n; i++) s += float(a[i]) * float(b[i]);
  return E(s);
}
template <class T, std::enable_if_t<::msl::vec_info<T>::is_vec, int> = 0>
inline auto length(T a) { return sqrt(dot(a, a)); }
template <class T, std::enable_if_t<::msl::vec_info<T>::is_vec, int> = 0>
inline auto length_squared(T a) { return dot(a, a); }
template <class T, std::enable_if_t<::msl::vec_info<T>::is_vec, int> = 0>
inline T normalize(T a) { return a * rsqrt(dot(a, a)); }
inline float3 cross(float3 a, float3 b) { return a.yzx * b.zxy - a.zxy * b.yzx; }

inline bool all(bool b) { return b; }
inline bool any(bool b) { return b; }
template <class T, std::enable_if_t<::msl::vec_info<T>::is_vec, int> = 0>
inline bool all(T v) {
  for (int i = 0; i < ::msl::vec_info<T>::n; i++)
    if (!v[i]) return false;
  return true;
}
template <class T, std::enable_if_t<::msl::vec_info<T>::is_vec, int> = 0>
inline bool any(T v) {
  for (int i = 0; i < ::msl::vec_info<T>::n; i++)
    if (v[i]) return true;
  return false;
}
// select(a, b, c): c ? b : a (component-wise for vectors)
template <class T, class C>
inline T select(T a, T b, C c) {
  if constexpr (::msl::vec_info<T>::is_vec) {
    T r = a;
    for (int i = 0; i < ::msl::vec_info<T>::n; i++) {
      bool ci;
      if constexpr (::msl::vec_info<C>::is_vec) ci = c[i] != 0; else ci = bool(c);
      r[i] = ci ? b[i] : a[i];
    }
    return r;
  } else {
    return c ? b : a;
  }
}
inline bool isnan(float x) { return __builtin_isnan(x); }
inline bool isinf(float x) { return __builtin_isinf(x); }
inline bool isfinite(float x) { return __builtin_isfinite(x); }
inline bool signbit(float x) { return __builtin_signbit(x); }
inline bool isnan(half x) { return __builtin_isnan(float(x)); }
inline bool isinf(half x) { return __builtin_isinf(float(x)); }
inline bool isfinite(half x) { return __builtin_isfinite(float(x)); }

// as_type<T>(x): bit reinterpretation between same-size types
template <class To, class From>
inline To as_type(const From &x) {
  static_assert(sizeof(To) == sizeof(From), "as_type: types must have the same size");
  To r;
  std::memcpy(&r, &x, sizeof(To));
  return r;
}

// precise:: and fast:: variants. On the CPU both are the precise libm
// functions (fast:: on a GPU is less accurate; compare with tolerances).
#define MSL_USING(name, ...) using ::metal::name;
namespace precise {
MSL_UNARY_LIST(MSL_USING)
MSL_BINARY_LIST(MSL_USING)
MSL_TERNARY_LIST(MSL_USING)
inline float divide(float a, float b) { return a / b; }
}  // namespace precise
namespace fast {
MSL_UNARY_LIST(MSL_USING)
MSL_BINARY_LIST(MSL_USING)
MSL_TERNARY_LIST(MSL_USING)
inline float divide(float a, float b) { return a / b; }
}  // namespace fast
#undef MSL_USING

// ---- limits, arrays
template <class T>
struct numeric_limits : std::numeric_limits<T> {};
template <>
struct numeric_limits<half> {
  static constexpr bool is_specialized = true;
  static constexpr half max() { return half(65504.0f); }
  static constexpr half lowest() { return half(-65504.0f); }
  static constexpr half min() { return half(6.103515625e-05f); }
  static constexpr half epsilon() { return half(0.0009765625f); }
  static constexpr half infinity() { return half(__builtin_inff()); }
  static constexpr half quiet_NaN() { return half(__builtin_nanf("")); }
};
template <class T, size_t N>
using array = std::array<T, N>;

// ---- simdgroup functions (32 lanes; inactive or exited lanes do not take part)
namespace detail {
using ::msl::rt::Fiber;
using ::msl::rt::kSimdWidth;
using ::msl::rt::load_slot;
using ::msl::rt::store_slot;
template <class T, class F>
inline void reduce_all(Fiber **l, F f) {
  bool have = false;
  T acc{};
  for (int i = 0; i < kSimdWidth; i++) {
    if (!l[i]) continue;
    T v = load_slot<T>(l[i]->in);
    acc = have ? f(acc, v) : v;
    have = true;
  }
  for (int i = 0; i < kSimdWidth; i++)
    if (l[i]) store_slot(l[i]->out, acc);
}
template <class T, class F>
inline void scan_all(Fiber **l, F f, bool inclusive) {
  T acc{};
  for (int i = 0; i < kSimdWidth; i++) {
    if (!l[i]) continue;
    T v = load_slot<T>(l[i]->in);
    if (inclusive) acc = f(acc, v);
    store_slot(l[i]->out, acc);
    if (!inclusive) acc = f(acc, v);
  }
}
template <class T> T add_(T a, T b) { return a + b; }
template <class T> T mul_(T a, T b) { return a * b; }
template <class T> T max_(T a, T b) { return ::metal::max(a, b); }
template <class T> T min_(T a, T b) { return ::metal::min(a, b); }
template <class T> T and_(T a, T b) { return a & b; }
template <class T> T or_(T a, T b) { return a | b; }
template <class T> T xor_(T a, T b) { return a ^ b; }
template <class T> void op_sum(Fiber **l) { reduce_all<T>(l, add_<T>); }
template <class T> void op_prod(Fiber **l) { reduce_all<T>(l, mul_<T>); }
template <class T> void op_max(Fiber **l) { reduce_all<T>(l, max_<T>); }
template <class T> void op_min(Fiber **l) { reduce_all<T>(l, min_<T>); }
template <class T> void op_and(Fiber **l) { reduce_all<T>(l, and_<T>); }
template <class T> void op_or(Fiber **l) { reduce_all<T>(l, or_<T>); }
template <class T> void op_xor(Fiber **l) { reduce_all<T>(l, xor_<T>); }
template <class T> void op_xsum(Fiber **l) { scan_all<T>(l, add_<T>, false); }
template <class T> void op_isum(Fiber **l) { scan_all<T>(l, add_<T>, true); }
// lane-indexed reads; `sel` maps (my lane, iarg) -> source lane or -1 (keep own)
template <class T, int (*sel)(int, int)>
void op_gather(Fiber **l) {
  for (int i = 0; i < kSimdWidth; i++) {
    if (!l[i]) continue;
    int src = sel(i, l[i]->iarg);
    const Fiber *s = (src >= 0 && src < kSimdWidth && l[src]) ? l[src] : l[i];
    std::memcpy(l[i]->out, s->in, sizeof(T));
  }
}
inline int sel_lane(int, int a) { return a; }
inline int sel_down(int i, int d) { return i + d; }
inline int sel_up(int i, int d) { return i - d; }
inline int sel_xor(int i, int m) { return i ^ m; }
inline int first_active(Fiber **l) {
  for (int i = 0; i < kSimdWidth; i++)
    if (l[i]) return i;
  return 0;
}
template <class T>
void op_bcast_first(Fiber **l) {
  int f = first_active(l);
  for (int i = 0; i < kSimdWidth; i++)
    if (l[i]) std::memcpy(l[i]->out, l[f]->in, sizeof(T));
}
}  // namespace detail

#define MSL_SIMD1(name, op)                                                      \
  template <class T>                                                             \
  inline T name(T x, MSL_SITE_PARAMS) {                                          \
    return ::msl::rt::simd_collective(&detail::op<T>, x, 0, MSL_SITE);           \
  }
MSL_SIMD1(simd_sum, op_sum)
MSL_SIMD1(simd_product, op_prod)
MSL_SIMD1(simd_max, op_max)
MSL_SIMD1(simd_min, op_min)
MSL_SIMD1(simd_and, op_and)
MSL_SIMD1(simd_or, op_or)
MSL_SIMD1(simd_xor, op_xor)
MSL_SIMD1(simd_prefix_exclusive_sum, op_xsum)
MSL_SIMD1(simd_prefix_inclusive_sum, op_isum)
MSL_SIMD1(simd_broadcast_first, op_bcast_first)
#undef MSL_SIMD1
#define MSL_SIMD2(name, selfn)                                                              \
  template <class T, class I>                                                               \
  inline T name(T x, I arg, MSL_SITE_PARAMS) {                                              \
    return ::msl::rt::simd_collective(&detail::op_gather<T, detail::selfn>, x, int(arg), MSL_SITE); \
  }
MSL_SIMD2(simd_broadcast, sel_lane)
MSL_SIMD2(simd_shuffle, sel_lane)
MSL_SIMD2(simd_shuffle_down, sel_down)
MSL_SIMD2(simd_shuffle_up, sel_up)
MSL_SIMD2(simd_shuffle_xor, sel_xor)
#undef MSL_SIMD2
inline bool simd_all(bool b, MSL_SITE_PARAMS) {
  return ::msl::rt::simd_collective(&detail::op_and<int>, int(b), 0, MSL_SITE) != 0;
}
inline bool simd_any(bool b, MSL_SITE_PARAMS) {
  return ::msl::rt::simd_collective(&detail::op_or<int>, int(b), 0, MSL_SITE) != 0;
}
inline bool simd_is_first(MSL_SITE_PARAMS) {
  uint lane = ::msl::rt::cur_fiber()->tiisg;
  uint first = ::msl::rt::simd_collective(&detail::op_min<uint>, lane, 0, MSL_SITE);
  return lane == first;
}

// ---- atomics (device atomics are real CPU atomics: threadgroups run in parallel)
enum memory_order {
  memory_order_relaxed = __ATOMIC_RELAXED,
  memory_order_acquire = __ATOMIC_ACQUIRE,
  memory_order_release = __ATOMIC_RELEASE,
  memory_order_acq_rel = __ATOMIC_ACQ_REL,
  memory_order_seq_cst = __ATOMIC_SEQ_CST,
};
template <class T>
struct _atomic {
  T value;
};
typedef _atomic<int> atomic_int;
typedef _atomic<uint> atomic_uint;
typedef _atomic<float> atomic_float;
typedef _atomic<bool> atomic_bool;
template <class T>
using atomic = _atomic<T>;

#ifndef MSL_SYNTAX_ONLY
// generic __atomic builtins: work for int, uint and float alike
template <class T, class U>
inline void atomic_store_explicit(volatile _atomic<T> *o, U v, memory_order) {
  T t = T(v);
  __atomic_store(&o->value, &t, __ATOMIC_RELAXED);
}
template <class T>
inline T atomic_load_explicit(volatile _atomic<T> *o, memory_order) {
  T r;
  __atomic_load(&o->value, &r, __ATOMIC_RELAXED);
  return r;
}
template <class T, class U>
inline T atomic_exchange_explicit(volatile _atomic<T> *o, U v, memory_order) {
  T t = T(v), r;
  __atomic_exchange(&o->value, &t, &r, __ATOMIC_RELAXED);
  return r;
}
template <class T, class U>
inline bool atomic_compare_exchange_weak_explicit(volatile _atomic<T> *o, T *expected, U desired, memory_order,
                                                  memory_order) {
  T d = T(desired);
  return __atomic_compare_exchange(&o->value, expected, &d, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
template <class T, class F>
inline T atomic_rmw(volatile _atomic<T> *o, F f) {
  T old, nv;
  __atomic_load(&o->value, &old, __ATOMIC_RELAXED);
  do {
    nv = f(old);
  } while (!__atomic_compare_exchange(&o->value, &old, &nv, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}
// Metal's atomic_float has add and sub only among the read-modify-write
// operations (no max, min, and, or, xor): int_only refuses the others.
#define MSL_ATOMIC_RMW(name, expr, int_only)                                   \
  template <class T, class U>                                                  \
  inline T atomic_fetch_##name##_explicit(volatile _atomic<T> *o, U v_, memory_order) { \
    static_assert(!(int_only && std::is_floating_point<T>::value),             \
                  "atomic_fetch_" #name "_explicit: Metal's atomic_float has add and sub only"); \
    T v = T(v_);                                                               \
    return atomic_rmw(o, [v](T a) { return T(expr); });                        \
  }
MSL_ATOMIC_RMW(add, a + v, false)
MSL_ATOMIC_RMW(sub, a - v, false)
MSL_ATOMIC_RMW(and, a & v, true)
MSL_ATOMIC_RMW(or, a | v, true)
MSL_ATOMIC_RMW(xor, a ^ v, true)
MSL_ATOMIC_RMW(max, a < v ? v : a, true)
MSL_ATOMIC_RMW(min, v < a ? v : a, true)
#undef MSL_ATOMIC_RMW
#else
// Syntax-only: atomics live in device or threadgroup memory, and the
// functions take pointers to those address spaces only (bodies are never
// run).
#define MSL_ATOMIC_FNS(AS)                                                                          \
  template <class T, class U>                                                                       \
  inline void atomic_store_explicit(volatile AS _atomic<T> *, U, memory_order) {}                   \
  template <class T>                                                                                \
  inline T atomic_load_explicit(volatile AS _atomic<T> *, memory_order) { return T(); }             \
  template <class T, class U>                                                                       \
  inline T atomic_exchange_explicit(volatile AS _atomic<T> *, U, memory_order) { return T(); }      \
  template <class T, class U>                                                                       \
  inline bool atomic_compare_exchange_weak_explicit(volatile AS _atomic<T> *, T *, U,               \
                                                    memory_order, memory_order) { return true; }    \
  MSL_ATOMIC_RMW(AS, add, false) MSL_ATOMIC_RMW(AS, sub, false) MSL_ATOMIC_RMW(AS, and, true)        \
  MSL_ATOMIC_RMW(AS, or, true) MSL_ATOMIC_RMW(AS, xor, true) MSL_ATOMIC_RMW(AS, max, true)          \
  MSL_ATOMIC_RMW(AS, min, true)
#define MSL_ATOMIC_RMW(AS, name, int_only)                                                        \
  template <class T, class U>                                                                     \
  inline T atomic_fetch_##name##_explicit(volatile AS _atomic<T> *, U, memory_order) {            \
    static_assert(!(int_only && std::is_floating_point<T>::value),                               \
                  "atomic_fetch_" #name "_explicit: Metal's atomic_float has add and sub only"); \
    return T();                                                                                   \
  }
MSL_ATOMIC_FNS(__attribute__((address_space(1))))
MSL_ATOMIC_FNS(__attribute__((address_space(3))))
#undef MSL_ATOMIC_RMW
#undef MSL_ATOMIC_FNS
#endif

}  // namespace metal

// half literals: 1.0h, 2h (a ud-suffix without '_' is only a warning in clang)
namespace metal {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wuser-defined-literals"
#pragma clang diagnostic ignored "-Wreserved-user-defined-literal"
constexpr half operator""h(long double v) { return half(float(v)); }
constexpr half operator""h(unsigned long long v) { return half(float(v)); }
#pragma clang diagnostic pop
}  // namespace metal

// MSL constants
#ifndef MAXFLOAT
#define MAXFLOAT FLT_MAX
#endif
#define HALF_MAX (half(65504.0f))
#define M_PI_F 3.14159265358979323846264338327950288f
#define M_PI_2_F 1.57079632679489661923132169163975144f
#define M_E_F 2.71828182845904523536028747135266250f
#define M_LN2_F 0.693147180559945309417232121458176568f
#define M_SQRT2_F 1.41421356237309504880168872420969808f
#define M_1_SQRT2_F 0.707106781186547524400844362104849039f
#define M_2_SQRTPI_F 1.12837916709551257389615890312154517f

// ============================================================== MSL syntax
#ifdef MSL_SYNTAX_ONLY
// Distinct address spaces (the numbers are arbitrary but distinct; thread
// is the default one). threadgroup variables are static, as clang allows
// no automatic variable in an address space; a threadgroup pointer
// parameter is a compile error here (not supported).
#define kernel
#define device __attribute__((address_space(1)))
#define constant const __attribute__((address_space(2)))
#define thread
#define threadgroup static __attribute__((address_space(3)))
// Kernel parameter attributes ([[buffer(n)]], [[thread_position_in_grid]],
// ...) stay undefined: clang ignores them as unknown attributes. Each
// instantiate_kernel is an explicit instantiation, as on Metal (whose
// [[host_name]] and [[kernel]] attributes clang does not accept there).
#define instantiate_kernel(name, func, ...) template decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;
#define register_kernel(func)
#else
// Address spaces. threadgroup storage must be declared without initializer
// (as in MSL); a `threadgroup T* p = ...` local or a threadgroup pointer
// parameter is a compile error here (not supported), never a silent bug.
#define kernel
#define device
#define thread
#define constant const
#define threadgroup [[clang::require_constant_initialization]] static thread_local

// Kernel parameter attributes -> default arguments bound at launch.
#define MSL_BIND_(expr) ]] = expr[::msl::rt::z[0
#define buffer(n) MSL_BIND_(::msl::rt::arg_buffer(n))
#define thread_position_in_grid MSL_BIND_(::msl::rt::builtin(::msl::rt::TPIG))
#define thread_position_in_threadgroup MSL_BIND_(::msl::rt::builtin(::msl::rt::TPITG))
#define threadgroup_position_in_grid MSL_BIND_(::msl::rt::builtin(::msl::rt::TGPIG))
#define threads_per_threadgroup MSL_BIND_(::msl::rt::builtin(::msl::rt::TPTG))
#define dispatch_threads_per_threadgroup MSL_BIND_(::msl::rt::builtin(::msl::rt::DTPTG))
#define threads_per_grid MSL_BIND_(::msl::rt::builtin(::msl::rt::TPGRID))
#define threadgroups_per_grid MSL_BIND_(::msl::rt::builtin(::msl::rt::TGPGRID))
#define thread_index_in_threadgroup MSL_BIND_(::msl::rt::builtin(::msl::rt::TIITG))
#define simdgroup_index_in_threadgroup MSL_BIND_(::msl::rt::builtin(::msl::rt::SGITG))
#define thread_index_in_simdgroup MSL_BIND_(::msl::rt::builtin(::msl::rt::TIISG))
#define simdgroups_per_threadgroup MSL_BIND_(::msl::rt::builtin(::msl::rt::SGPTG))
#define threads_per_simdgroup MSL_BIND_(::msl::rt::builtin(::msl::rt::TPSG))
#define thread_execution_width MSL_BIND_(::msl::rt::builtin(::msl::rt::TPSG))
#define grid_origin MSL_BIND_(::msl::rt::builtin(::msl::rt::ZERO))
#endif  // MSL_SYNTAX_ONLY

// Vector constructors: float4(x), float4(a.xy, b.zw), float3(v.xyz), ...
// (function-like macros: a bare `float4` is still the type).
#define float2(...) ::msl::make_vec<float, 2>(__VA_ARGS__)
#define float3(...) ::msl::make_vec<float, 3>(__VA_ARGS__)
#define float4(...) ::msl::make_vec<float, 4>(__VA_ARGS__)
#define half2(...) ::msl::make_vec<half, 2>(__VA_ARGS__)
#define half3(...) ::msl::make_vec<half, 3>(__VA_ARGS__)
#define half4(...) ::msl::make_vec<half, 4>(__VA_ARGS__)
#define int2(...) ::msl::make_vec<int, 2>(__VA_ARGS__)
#define int3(...) ::msl::make_vec<int, 3>(__VA_ARGS__)
#define int4(...) ::msl::make_vec<int, 4>(__VA_ARGS__)
#define uint2(...) ::msl::make_vec<uint, 2>(__VA_ARGS__)
#define uint3(...) ::msl::make_vec<uint, 3>(__VA_ARGS__)
#define uint4(...) ::msl::make_vec<uint, 4>(__VA_ARGS__)
#define short2(...) ::msl::make_vec<short, 2>(__VA_ARGS__)
#define short3(...) ::msl::make_vec<short, 3>(__VA_ARGS__)
#define short4(...) ::msl::make_vec<short, 4>(__VA_ARGS__)
#define ushort2(...) ::msl::make_vec<ushort, 2>(__VA_ARGS__)
#define ushort3(...) ::msl::make_vec<ushort, 3>(__VA_ARGS__)
#define ushort4(...) ::msl::make_vec<ushort, 4>(__VA_ARGS__)
#define char2(...) ::msl::make_vec<char, 2>(__VA_ARGS__)
#define char3(...) ::msl::make_vec<char, 3>(__VA_ARGS__)
#define char4(...) ::msl::make_vec<char, 4>(__VA_ARGS__)
#define uchar2(...) ::msl::make_vec<uchar, 2>(__VA_ARGS__)
#define uchar3(...) ::msl::make_vec<uchar, 3>(__VA_ARGS__)
#define uchar4(...) ::msl::make_vec<uchar, 4>(__VA_ARGS__)

#ifndef MSL_SYNTAX_ONLY
// Kernel registry: a library's instantiate_kernel("host name", template,
// args...) and register_kernel(function) lines (see the prelude of the
// project's kernels) add its kernels here, so one runner binary serves every
// kernel of its libraries, selected by name at run time. The runner wraps
// library N in a namespace that defines msl_lib_id = N, which keeps equal
// host names of different libraries apart.
namespace msl {
namespace rt {
struct KernelEntry {
  int lib;
  const char *name;
  void (*fn)();
};
inline std::vector<KernelEntry> &kernel_registry() {
  static std::vector<KernelEntry> r;
  return r;
}
struct KernelReg {
  KernelReg(int lib, const char *name, void (*fn)()) { kernel_registry().push_back(KernelEntry{lib, name, fn}); }
};
}  // namespace rt
}  // namespace msl
constexpr int msl_lib_id = 0;
#define MSL_CAT2_(a, b) a##b
#define MSL_CAT_(a, b) MSL_CAT2_(a, b)
#define instantiate_kernel(name, func, ...) \
  static ::msl::rt::KernelReg MSL_CAT_(msl_kernel_reg_, __COUNTER__)(msl_lib_id, name, +[] { func<__VA_ARGS__>(); });
#define register_kernel(func) \
  static ::msl::rt::KernelReg MSL_CAT_(msl_kernel_reg_, __COUNTER__)(msl_lib_id, #func, +[] { func(); });

// Host-side launch helper: enc.dispatch_threads(MSL_KERNEL(name), grid, tg, "name")
// (every kernel parameter has a default argument, so the kernel is called as name()).
#define MSL_KERNEL(name) (+[] { name(); })
#endif  // MSL_SYNTAX_ONLY

#endif  // MSL_COMPAT_H
