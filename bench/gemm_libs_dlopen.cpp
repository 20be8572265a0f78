// OpenBLAS and BLIS, loaded with dlopen. Both export cblas_sgemm, as mmla does, so none of them
// can be linked beside the others: each is opened with RTLD_LOCAL (its symbols stay out of the
// global scope, so mmla's cblas_sgemm stays mmla's) and, where the sanitizers allow, RTLD_DEEPBIND
// (its own calls bind to its own symbols first, so it never calls into mmla). Functions are looked
// up in the handle and checked to come from the file that was opened.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gemm_libs.hpp"

#ifndef MMLA_BENCH_MULTIARCH
#define MMLA_BENCH_MULTIARCH ""
#endif

namespace mmla_bench {
namespace {

int dlopen_flags() {
#if defined(__SANITIZE_ADDRESS__)
  return RTLD_NOW | RTLD_LOCAL;  // the sanitizer runtime refuses RTLD_DEEPBIND
#else
  return RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif
}

// Opens the first candidate that loads. *why says why none did: the candidates tried, plus the
// dlerror() of any that exists but would not load.
void* open_first(const std::vector<std::string>& candidates, std::string* why) {
  std::string names, errors;
  for (const std::string& c : candidates) {
    if (void* h = dlopen(c.c_str(), dlopen_flags())) return h;
    const char* err = dlerror();
    names += (names.empty() ? "" : ", ") + c;
    if (err != nullptr && std::strstr(err, "No such file") == nullptr) errors += std::string("; ") + err;
  }
  *why = "tried " + names + errors;
  return nullptr;
}

std::vector<std::string> candidates(const std::string& given, const char* hint, const char* soname,
                                    std::initializer_list<const char*> debian_dirs) {
  if (!given.empty()) return {given};
  std::vector<std::string> c;
  if (hint != nullptr && *hint) c.emplace_back(hint);
  c.emplace_back(soname);
  // Debian installs each threading flavour in its own directory; the soname above is whichever
  // the alternatives system points at.
  if (*MMLA_BENCH_MULTIARCH != '\0')
    for (const char* dir : debian_dirs)
      c.push_back(std::string("/usr/lib/") + MMLA_BENCH_MULTIARCH + "/" + dir + "/" + soname);
  return c;
}

template <class F>
F symbol(void* handle, const char* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

// ---------------------------------------------------------------------------------------------
// OpenBLAS: cblas_sgemm, and cblas_sbgemm (bf16 A and B, fp32 C; same signature otherwise) when the
// library was built with it (BUILD_BFLOAT16; Debian 12's is not).

#ifndef MMLA_BENCH_OPENBLAS_HINT
#define MMLA_BENCH_OPENBLAS_HINT ""
#endif

enum { kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112 };

// T: float for cblas_sgemm, uint16_t (OpenBLAS's bfloat16) for cblas_sbgemm.
template <class Int, class T>
using CblasGemm = void (*)(int, int, int, Int, Int, Int, float, const T*, Int, const T*, Int, float, float*,
                           Int);

template <class Int, class T>
class OpenblasRunner final : public GemmRunner {
 public:
  OpenblasRunner(CblasGemm<Int, T> fn, const T* a, const T* b, const Problem& p, float* c)
      : fn_(fn), a_(a), b_(b), p_(p), c_(c) {}
  void run() override {
    const Int m = static_cast<Int>(p_.m), n = static_cast<Int>(p_.n), k = static_cast<Int>(p_.k);
    fn_(kCblasRowMajor, kCblasNoTrans, p_.b_trans ? kCblasTrans : kCblasNoTrans, m, n, k, 1.0f, a_, k, b_,
        static_cast<Int>(p_.ldb()), 0.0f, c_, n);
  }

 private:
  CblasGemm<Int, T> fn_;
  const T* a_;
  const T* b_;
  Problem p_;
  float* c_;
};

// OpenBLAS (cblas_sgemm, T = float) or OpenBLAS:sb (cblas_sbgemm, T = uint16_t).
template <class T>
class OpenblasLib final : public GemmLib {
 public:
  static constexpr bool kBf16 = sizeof(T) == 2;
  // The handle is never closed: libraries with thread pools do not like dlclose.
  OpenblasLib(void* fn, std::string info, bool int64) : info_(std::move(info)) {
    if (int64)
      gemm64_ = reinterpret_cast<CblasGemm<int64_t, T>>(fn);
    else
      gemm32_ = reinterpret_cast<CblasGemm<int32_t, T>>(fn);
  }
  std::string name() const override { return kBf16 ? "OpenBLAS:sb" : "OpenBLAS"; }
  Arith arith() const override { return kBf16 ? Arith::kBf16 : Arith::kFp32; }
  std::string info() const override { return info_; }
  std::unique_ptr<GemmRunner> prepare(const Problem& p, float* c) override {
    const T* a = nullptr;
    const T* b = nullptr;
    if constexpr (kBf16) {
      a = p.a_bf16, b = p.b_bf16;
      if (a == nullptr || b == nullptr) throw BenchError(name() + ": no bf16 inputs");
    } else {
      a = p.a, b = p.b;
    }
    if (gemm64_) return std::make_unique<OpenblasRunner<int64_t, T>>(gemm64_, a, b, p, c);
    if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX)
      throw BenchError(name() + ": sizes beyond its 32-bit integers");
    return std::make_unique<OpenblasRunner<int32_t, T>>(gemm32_, a, b, p, c);
  }

 private:
  std::string info_;
  CblasGemm<int64_t, T> gemm64_ = nullptr;
  CblasGemm<int32_t, T> gemm32_ = nullptr;
};

void add_openblas(std::vector<std::unique_ptr<GemmLib>>* libs, LibSearch* search) {
  std::string tried;
  void* h = open_first(candidates(search->openblas_path, MMLA_BENCH_OPENBLAS_HINT, "libopenblas.so.0",
                                  {"openblas-pthread", "openblas-openmp", "openblas-serial"}),
                       &tried);
  if (h == nullptr) {
    search->notes.push_back("OpenBLAS: not found (" + tried + ")");
    return;
  }
  void* sgemm = dlsym(h, "cblas_sgemm");
  void* sbgemm = dlsym(h, "cblas_sbgemm");
  const auto get_config = symbol<const char* (*)()>(h, "openblas_get_config");
  const auto get_corename = symbol<const char* (*)()>(h, "openblas_get_corename");
  const auto set_threads = symbol<void (*)(int)>(h, "openblas_set_num_threads");
  const auto get_threads = symbol<int (*)()>(h, "openblas_get_num_threads");
  const std::string file = library_file_of(reinterpret_cast<void*>(get_config));
  if (sgemm == nullptr || get_config == nullptr || library_file_of(sgemm) != file) {
    search->notes.push_back("OpenBLAS: " + file + " has no cblas_sgemm/openblas_get_config of its own");
    return;
  }
  if (set_threads) set_threads(search->threads);
  const std::string config = get_config();
  std::string info = "OpenBLAS " + file + ": " + config;
  if (get_corename) info += ", core " + std::string(get_corename());
  if (get_threads) info += ", " + std::to_string(get_threads()) + " thread(s)";
  const bool int64 = config.find("USE64BITINT") != std::string::npos;
  if (search->wants("OpenBLAS")) libs->push_back(std::make_unique<OpenblasLib<float>>(sgemm, info, int64));
  if (search->wants("OpenBLAS:sb")) {
    if (sbgemm != nullptr && library_file_of(sbgemm) == file)
      libs->push_back(std::make_unique<OpenblasLib<uint16_t>>(sbgemm, info + ", cblas_sbgemm", int64));
    else
      search->notes.push_back(
          "OpenBLAS:sb: " + file +
          " has no cblas_sbgemm (OpenBLAS builds it only with BUILD_BFLOAT16=1): no OpenBLAS:sb column");
  }
}

// ---------------------------------------------------------------------------------------------
// BLIS: its typed API bli_sgemm (strides for rows and columns, no CBLAS layer in between).

#ifndef MMLA_BENCH_BLIS_HINT
#define MMLA_BENCH_BLIS_HINT ""
#endif

// dim_t and inc_t are BLIS's gint_t: 64-bit unless BLIS was configured with 32-bit integers.
template <class Int>
using BliSgemm = void (*)(int, int, Int, Int, Int, float*, float*, Int, Int, float*, Int, Int, float*, float*,
                          Int, Int);

template <class Int>
class BlisRunner final : public GemmRunner {
 public:
  BlisRunner(BliSgemm<Int> fn, const Problem& p, float* c) : fn_(fn), p_(p), c_(c) {}
  void run() override {
    constexpr int kNoTranspose = 0;  // BLIS_NO_TRANSPOSE
    float one = 1.0f, zero = 0.0f;
    const Int m = static_cast<Int>(p_.m), n = static_cast<Int>(p_.n), k = static_cast<Int>(p_.k);
    // bli_sgemm takes non-const pointers; it does not write A or B.
    // B's element (p, j) at b[p * rs + j * cs]: rs = n, cs = 1, or transposed rs = 1, cs = k.
    const Int b_rs = p_.b_trans ? 1 : n, b_cs = p_.b_trans ? k : 1;
    fn_(kNoTranspose, kNoTranspose, m, n, k, &one, const_cast<float*>(p_.a), k, 1, const_cast<float*>(p_.b),
        b_rs, b_cs, &zero, c_, n, 1);
  }

 private:
  BliSgemm<Int> fn_;
  Problem p_;
  float* c_;
};

class BlisLib final : public GemmLib {
 public:
  BlisLib(void* sgemm, std::string info, bool int64) : info_(std::move(info)) {
    if (int64)
      sgemm64_ = reinterpret_cast<BliSgemm<int64_t>>(sgemm);
    else
      sgemm32_ = reinterpret_cast<BliSgemm<int32_t>>(sgemm);
  }
  std::string name() const override { return "BLIS"; }
  std::string info() const override { return info_; }
  std::unique_ptr<GemmRunner> prepare(const Problem& p, float* c) override {
    if (sgemm64_) return std::make_unique<BlisRunner<int64_t>>(sgemm64_, p, c);
    if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX)
      throw BenchError("BLIS: sizes beyond its 32-bit integers");
    return std::make_unique<BlisRunner<int32_t>>(sgemm32_, p, c);
  }

 private:
  std::string info_;
  BliSgemm<int64_t> sgemm64_ = nullptr;
  BliSgemm<int32_t> sgemm32_ = nullptr;
};

template <class Int>
void blis_set_threads(void* h, int threads) {
  if (const auto set = symbol<void (*)(Int)>(h, "bli_thread_set_num_threads")) set(static_cast<Int>(threads));
}

template <class Int>
std::string blis_threading(void* h) {
  const auto openmp = symbol<Int (*)()>(h, "bli_info_get_enable_openmp");
  const auto pthreads = symbol<Int (*)()>(h, "bli_info_get_enable_pthreads");
  if (openmp && openmp()) return "openmp";
  if (pthreads && pthreads()) return "pthreads";
  return openmp ? "no threading" : "";
}

void add_blis(std::vector<std::unique_ptr<GemmLib>>* libs, LibSearch* search) {
  std::string tried;
  void* h = open_first(candidates(search->blis_path, MMLA_BENCH_BLIS_HINT, "libblis.so.4",
                                  {"blis-openmp", "blis-pthread", "blis-serial"}),
                       &tried);
  if (h == nullptr) {
    search->notes.push_back("BLIS: not found (" + tried + ")");
    return;
  }
  void* sgemm = dlsym(h, "bli_sgemm");
  // Both return gint_t; the upper half of a 32-bit return is undefined, so read it as int32_t
  // first (the size is 32 or 64 either way).
  const auto int_size = symbol<int32_t (*)()>(h, "bli_info_get_int_type_size");
  const auto version = symbol<const char* (*)()>(h, "bli_info_get_version_str");
  const auto arch_id = symbol<int (*)()>(h, "bli_arch_query_id");
  const auto arch_string = symbol<const char* (*)(int)>(h, "bli_arch_string");
  const std::string file = library_file_of(sgemm);
  if (sgemm == nullptr || int_size == nullptr) {
    search->notes.push_back("BLIS: " + file + " has no bli_sgemm/bli_info_get_int_type_size");
    return;
  }
  const bool int64 = int_size() == 64;
  std::string info = "BLIS " + std::string(version ? version() : "?") + " " + file;
  if (arch_id && arch_string) info += ": config " + std::string(arch_string(arch_id()));
  info += int64 ? ", 64-bit integers" : ", 32-bit integers";
  std::string threading;
  if (int64) {
    blis_set_threads<int64_t>(h, search->threads);
    threading = blis_threading<int64_t>(h);
  } else {
    blis_set_threads<int32_t>(h, search->threads);
    threading = blis_threading<int32_t>(h);
  }
  if (!threading.empty()) info += ", " + threading;
  info += ", " + std::to_string(search->threads) + " thread(s) requested";
  libs->push_back(std::make_unique<BlisLib>(sgemm, std::move(info), int64));
}

}  // namespace

void add_dlopen_libs(std::vector<std::unique_ptr<GemmLib>>* libs, LibSearch* search) {
  if (search->wants("OpenBLAS") || search->wants("OpenBLAS:sb")) add_openblas(libs, search);
  if (search->wants("BLIS")) add_blis(libs, search);
}

}  // namespace mmla_bench
