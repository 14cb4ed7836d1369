// msl_run.cpp - the runner behind package mslcpu: every kernel of one or more
// MSL libraries in one binary, serving dispatch requests on stdin until EOF,
// so a library is compiled once and one process runs many launches.
//
//   clang++ -std=c++17 -O1 -I <runtime>/include -I <runtime> \
//       -DMSL_LIBS_FILE='"libs.inc"' msl_run.cpp -o runner -lpthread
//
// libs.inc wraps library N in `namespace mslcpu_libN { constexpr int
// msl_lib_id = N; #include "lib.metal" }`.
//
// `runner -list` prints "<lib> <host name>" per registered kernel.
//
// Request (little endian):
//   "MSLQ" u32 lib, u32 namelen, name bytes, u32 schedule (0 forward,
//   1 reverse, 2 shuffle),
//   u32 nmem, nmem x { u64 len, u8 copy_back, len bytes },
//   u32 nbuf, nbuf x { u32 mem, u64 byte offset }   (bound to [[buffer(i)]]),
//   u64 plen, plen bytes                            (setBytes at index nbuf if plen > 0),
//   u32 grid[3], u32 group[3]                       (dispatchThreads)
// Response: u32 status; status 0: the bytes of every copy_back memory in
// request order (the lengths are the request's); status 1: u32 len, message.
// A kernel fault (msl_compat fatal error, crash) ends the process; its
// stderr says why.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "msl_compat.h"
#include MSL_LIBS_FILE
#include "msl_end.h"

namespace {

bool rd(void *p, size_t n) { return n == 0 || std::fread(p, 1, n, stdin) == n; }

template <class T>
T rdv() {
  T v{};
  if (!rd(&v, sizeof v)) {
    std::fprintf(stderr, "msl_run: short request\n");
    std::exit(2);
  }
  return v;
}

void wr(const void *p, size_t n) {
  if (n && std::fwrite(p, 1, n, stdout) != n) std::exit(3);
}

void fail(const std::string &msg) {
  uint32_t status = 1, n = uint32_t(msg.size());
  wr(&status, 4);
  wr(&n, 4);
  wr(msg.data(), n);
  std::fflush(stdout);
}

const char *schedules[] = {"forward", "reverse", "shuffle"};

}  // namespace

int main(int argc, char **argv) {
  auto &reg = msl::rt::kernel_registry();
  std::map<std::pair<int, std::string>, void (*)()> kernels;
  int dups = 0;
  for (auto &k : reg) {
    if (!kernels.emplace(std::make_pair(k.lib, std::string(k.name)), k.fn).second) {
      std::fprintf(stderr, "msl_run: library %d: kernel %s is instantiated twice\n", k.lib, k.name);
      dups++;
    }
  }
  if (argc > 1 && std::strcmp(argv[1], "-list") == 0) {
    for (auto &k : reg) std::printf("%d %s\n", k.lib, k.name);
    return dups ? 1 : 0;
  }
  static char outbuf[1 << 16];
  std::setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
  struct Mem {
    std::vector<unsigned char> data;
    bool copy_back;
  };
  std::vector<Mem> mems;
  std::vector<unsigned char> params;
  for (;;) {
    char magic[4];
    size_t got = std::fread(magic, 1, 4, stdin);
    if (got == 0) return 0;
    if (got != 4 || std::memcmp(magic, "MSLQ", 4) != 0) {
      std::fprintf(stderr, "msl_run: bad request magic\n");
      return 2;
    }
    uint32_t lib = rdv<uint32_t>();
    std::string name(rdv<uint32_t>(), '\0');
    if (!rd(&name[0], name.size())) return 2;
    uint32_t schedule = rdv<uint32_t>();
    mems.resize(rdv<uint32_t>());
    for (auto &m : mems) {
      uint64_t len = rdv<uint64_t>();
      m.copy_back = rdv<uint8_t>() != 0;
      m.data.resize(len);
      if (!rd(m.data.data(), len)) return 2;
    }
    uint32_t nbuf = rdv<uint32_t>();
    std::vector<std::pair<uint32_t, uint64_t>> bufs(nbuf);
    for (auto &b : bufs) {
      b.first = rdv<uint32_t>();
      b.second = rdv<uint64_t>();
    }
    params.resize(rdv<uint64_t>());
    if (!rd(params.data(), params.size())) return 2;
    uint32_t grid[3], group[3];
    for (auto &g : grid) g = rdv<uint32_t>();
    for (auto &g : group) g = rdv<uint32_t>();

    auto it = kernels.find(std::make_pair(int(lib), name));
    if (it == kernels.end()) {
      fail("no kernel named " + name + " in the library");
      continue;
    }
    if (nbuf + (params.empty() ? 0 : 1) > uint32_t(msl::rt::kMaxBuffers)) {
      fail("too many buffers for kernel " + name);
      continue;
    }
    msl::ComputeEncoder enc;
    bool ok = true;
    for (uint32_t i = 0; i < nbuf; i++) {
      auto &b = bufs[i];
      if (b.first >= mems.size() || b.second > mems[b.first].data.size()) {
        fail("buffer " + std::to_string(i) + " of kernel " + name + " is out of range");
        ok = false;
        break;
      }
      enc.set_buffer(mems[b.first].data.data(), b.second, int(i));
    }
    if (!ok) continue;
    if (!params.empty()) enc.set_bytes(params.data(), params.size(), int(nbuf));
    if (schedule < 3) setenv("MSL_SCHEDULE", schedules[schedule], 1);
    enc.dispatch_threads(it->second, msl::Size{grid[0], grid[1], grid[2]}, msl::Size{group[0], group[1], group[2]},
                         name.c_str());
    uint32_t status = 0;
    wr(&status, 4);
    for (auto &m : mems)
      if (m.copy_back) wr(m.data.data(), m.data.size());
    std::fflush(stdout);
  }
}
