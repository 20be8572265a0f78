// mmla's own columns (plain mmla_sgemm, prepacked B, mmla_sbgemm on bf16 inputs, mmla_sgemm in bf16
// fp-math mode) and what all libraries share.
#include "gemm_libs.hpp"

#include <dlfcn.h>
#include <mmla/cblas.h>
#include <mmla/mmla.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace mmla_bench {

void set_thread_environment(int threads) {
  const std::string n = std::to_string(threads);
  // Read by OpenBLAS and BLIS when they are loaded, by libgomp (oneDNN, BLIS-openmp) if it is not
  // loaded yet, and by mmla's thread pool. Overwritten: a benchmark that says "1 thread" must mean
  // it for every column.
  for (const char* var : {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "BLIS_NUM_THREADS",
                          "MMLA_NUM_THREADS"})
    setenv(var, n.c_str(), 1);
  // OpenBLAS's idle workers spin for 2^28 cycles (~0.1 s) by default, stealing a core from whichever
  // library runs next on a small machine; 2^22 (~1 ms) is about mmla's spin (libgomp's is longer:
  // docs/benchmarking.md). Kept if the user set it.
  if (threads > 1) setenv("OPENBLAS_THREAD_TIMEOUT", "22", 0);
}

std::string library_file_of(const void* addr) {
  Dl_info info{};
  if (addr == nullptr || dladdr(addr, &info) == 0 || info.dli_fname == nullptr) return {};
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) != nullptr) return resolved;
  return info.dli_fname;
}

namespace {

mmla_transpose trans_b(const Problem& p) { return p.b_trans ? MMLA_TRANS : MMLA_NO_TRANS; }

std::string status_message(const char* what, mmla_status st) {
  return std::string(what) + " failed: " + mmla_status_string(st) + ": " + mmla_last_error();
}

class MmlaRunner final : public GemmRunner {
 public:
  MmlaRunner(const Problem& p, float* c) : p_(p), c_(c) {}
  void run() override {
    const mmla_status st = mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, trans_b(p_), p_.m, p_.n, p_.k, 1.0f,
                                      p_.a, p_.k, p_.b, p_.ldb(), 0.0f, c_, p_.n);
    if (st != MMLA_STATUS_SUCCESS) throw BenchError(status_message("mmla_sgemm", st));
  }

 private:
  Problem p_;
  float* c_;
};

std::string mmla_info() {
  return "mmla " + std::string(mmla_version()) + ", " + library_file_of(reinterpret_cast<void*>(&mmla_sgemm));
}

class MmlaLib final : public GemmLib {
 public:
  std::string name() const override { return "mmla"; }
  std::string info() const override { return mmla_info(); }
  std::unique_ptr<GemmRunner> prepare(const Problem& p, float* c) override {
    return std::make_unique<MmlaRunner>(p, c);
  }
};

// B packed once by mmla_pack_b (not timed); each run is one mmla_gemm_packed call.
class MmlaPackedRunner final : public GemmRunner {
 public:
  MmlaPackedRunner(const Problem& p, float* c) : p_(p), c_(c) {
    const mmla_status st = mmla_pack_b(MMLA_ROW_MAJOR, trans_b(p), p.k, p.n, p.b, p.ldb(), &packed_);
    if (st != MMLA_STATUS_SUCCESS) throw BenchError(status_message("mmla_pack_b", st));
    size_t bytes = 0;
    if (mmla_packed_size(packed_, &bytes) == MMLA_STATUS_SUCCESS) bytes_ = bytes;
  }
  ~MmlaPackedRunner() override { mmla_packed_free(packed_); }
  MmlaPackedRunner(const MmlaPackedRunner&) = delete;
  MmlaPackedRunner& operator=(const MmlaPackedRunner&) = delete;

  void run() override {
    const mmla_status st = mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, p_.m, p_.n, p_.k, 1.0f, p_.a, p_.k,
                                            packed_, 0.0f, c_, p_.n);
    if (st != MMLA_STATUS_SUCCESS) throw BenchError(status_message("mmla_gemm_packed", st));
  }
  std::string impl() const override {
    return bytes_ ? "packed B " + std::to_string(bytes_) + " bytes" : std::string();
  }

 private:
  Problem p_;
  float* c_;
  mmla_packed_matrix* packed_ = nullptr;
  size_t bytes_ = 0;
};

class MmlaPackedLib final : public GemmLib {
 public:
  std::string name() const override { return "mmla:packed"; }
  bool prepacked() const override { return true; }
  std::string info() const override { return mmla_info() + " (mmla_pack_b + mmla_gemm_packed)"; }
  std::unique_ptr<GemmRunner> prepare(const Problem& p, float* c) override {
    return std::make_unique<MmlaPackedRunner>(p, c);
  }
};

// mmla_sbgemm on A and B converted to bf16 once per shape (Problem::a_bf16/b_bf16, not timed).
class MmlaBf16Runner final : public GemmRunner {
 public:
  MmlaBf16Runner(const Problem& p, float* c) : p_(p), c_(c) {
    if (p.a_bf16 == nullptr || p.b_bf16 == nullptr) throw BenchError("mmla:bf16: no bf16 inputs");
  }
  void run() override {
    const mmla_status st = mmla_sbgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, trans_b(p_), p_.m, p_.n, p_.k, 1.0f,
                                       p_.a_bf16, p_.k, p_.b_bf16, p_.ldb(), 0.0f, c_, p_.n);
    if (st != MMLA_STATUS_SUCCESS) throw BenchError(status_message("mmla_sbgemm", st));
  }

 private:
  Problem p_;
  float* c_;
};

class MmlaBf16Lib final : public GemmLib {
 public:
  std::string name() const override { return "mmla:bf16"; }
  Arith arith() const override { return Arith::kBf16; }
  std::string info() const override { return mmla_info() + " (mmla_sbgemm, bf16 A and B)"; }
  std::unique_ptr<GemmRunner> prepare(const Problem& p, float* c) override {
    return std::make_unique<MmlaBf16Runner>(p, c);
  }
};

// Prepacked bf16 weights: B (Problem::b_bf16) packed once by mmla_pack_b_bf16 (not timed); each run
// is one mmla_sbgemm_packed call on the bf16 A: the same inputs as oneDNN:bf16pB.
class MmlaBf16PackedRunner final : public GemmRunner {
 public:
  MmlaBf16PackedRunner(const Problem& p, float* c) : p_(p), c_(c) {
    if (p.a_bf16 == nullptr || p.b_bf16 == nullptr) throw BenchError("mmla:bf16pB: no bf16 inputs");
    const mmla_status st =
        mmla_pack_b_bf16(MMLA_ROW_MAJOR, trans_b(p), p.k, p.n, p.b_bf16, p.ldb(), &packed_);
    if (st != MMLA_STATUS_SUCCESS) throw BenchError(status_message("mmla_pack_b_bf16", st));
  }
  ~MmlaBf16PackedRunner() override { mmla_packed_free(packed_); }
  MmlaBf16PackedRunner(const MmlaBf16PackedRunner&) = delete;
  MmlaBf16PackedRunner& operator=(const MmlaBf16PackedRunner&) = delete;
  void run() override {
    const mmla_status st = mmla_sbgemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, p_.m, p_.n, p_.k, 1.0f,
                                              p_.a_bf16, p_.k, packed_, 0.0f, c_, p_.n);
    if (st != MMLA_STATUS_SUCCESS) throw BenchError(status_message("mmla_sbgemm_packed", st));
  }

 private:
  Problem p_;
  float* c_;
  mmla_packed_matrix* packed_ = nullptr;
};

class MmlaBf16PackedLib final : public GemmLib {
 public:
  std::string name() const override { return "mmla:bf16pB"; }
  Arith arith() const override { return Arith::kBf16; }
  bool prepacked() const override { return true; }
  std::string info() const override { return mmla_info() + " (mmla_pack_b_bf16 + mmla_sbgemm_packed)"; }
  std::unique_ptr<GemmRunner> prepare(const Problem& p, float* c) override {
    return std::make_unique<MmlaBf16PackedRunner>(p, c);
  }
};

// mmla_sgemm on the fp32 inputs with the calling thread in bf16 fp-math mode ("fast math"). The
// mode is set around each call and cleared after it (the other columns run on the same thread);
// setting a thread-local costs nanoseconds against the call.
class MmlaFastMathRunner final : public GemmRunner {
 public:
  MmlaFastMathRunner(const Problem& p, float* c) : p_(p), c_(c) {}
  void run() override {
    mmla_status st = mmla_set_thread_fpmath_mode(MMLA_FPMATH_BF16);
    if (st != MMLA_STATUS_SUCCESS) throw BenchError(status_message("mmla_set_thread_fpmath_mode(BF16)", st));
    st = mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, trans_b(p_), p_.m, p_.n, p_.k, 1.0f, p_.a, p_.k, p_.b,
                    p_.ldb(), 0.0f, c_, p_.n);
    const mmla_status restored = mmla_set_thread_fpmath_mode(MMLA_FPMATH_DEFAULT);
    if (st != MMLA_STATUS_SUCCESS) throw BenchError(status_message("mmla_sgemm (fast math)", st));
    if (restored != MMLA_STATUS_SUCCESS)
      throw BenchError(status_message("mmla_set_thread_fpmath_mode(DEFAULT)", restored));
  }

 private:
  Problem p_;
  float* c_;
};

class MmlaFastMathLib final : public GemmLib {
 public:
  std::string name() const override { return "mmla:fastmath"; }
  Arith arith() const override { return Arith::kFastMath; }
  std::string info() const override {
    return mmla_info() + " (mmla_sgemm, thread fp-math mode MMLA_FPMATH_BF16)";
  }
  std::unique_ptr<GemmRunner> prepare(const Problem& p, float* c) override {
    return std::make_unique<MmlaFastMathRunner>(p, c);
  }
};

// Another mmla column on one thread (mmla_set_num_threads(1) around each call, the default
// restored after it): the baseline of the thread-scaling ratios, measured in the same run.
class OneThreadRunner final : public GemmRunner {
 public:
  explicit OneThreadRunner(std::unique_ptr<GemmRunner> inner) : inner_(std::move(inner)) {}
  void run() override {
    mmla_set_num_threads(1);
    try {
      inner_->run();
    } catch (...) {
      mmla_set_num_threads(0);
      throw;
    }
    mmla_set_num_threads(0);
  }
  std::string impl() const override { return inner_->impl(); }

 private:
  std::unique_ptr<GemmRunner> inner_;
};

class OneThreadLib final : public GemmLib {
 public:
  explicit OneThreadLib(std::unique_ptr<GemmLib> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name() + ":1t"; }
  Arith arith() const override { return inner_->arith(); }
  bool prepacked() const override { return inner_->prepacked(); }
  std::string info() const override { return inner_->info() + " on 1 thread"; }
  std::unique_ptr<GemmRunner> prepare(const Problem& p, float* c) override {
    return std::make_unique<OneThreadRunner>(inner_->prepare(p, c));
  }

 private:
  std::unique_ptr<GemmLib> inner_;
};

}  // namespace

void add_mmla_libs(std::vector<std::unique_ptr<GemmLib>>* libs, LibSearch* search) {
  if (search->wants("mmla")) libs->push_back(std::make_unique<MmlaLib>());
  if (search->wants("mmla:packed")) libs->push_back(std::make_unique<MmlaPackedLib>());
  if (search->wants("mmla:bf16")) libs->push_back(std::make_unique<MmlaBf16Lib>());
  if (search->wants("mmla:bf16pB")) libs->push_back(std::make_unique<MmlaBf16PackedLib>());
  if (search->wants("mmla:fastmath")) libs->push_back(std::make_unique<MmlaFastMathLib>());
  if (search->wants("mmla:1t")) libs->push_back(std::make_unique<OneThreadLib>(std::make_unique<MmlaLib>()));
  if (search->wants("mmla:bf16:1t"))
    libs->push_back(std::make_unique<OneThreadLib>(std::make_unique<MmlaBf16Lib>()));
}

}  // namespace mmla_bench
