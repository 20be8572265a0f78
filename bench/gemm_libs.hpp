// The GEMM implementations mmla-bench times side by side: mmla itself (plain and with prepacked B)
// and whatever other libraries are on the machine (OpenBLAS and BLIS through dlopen, oneDNN when
// the build found it). Every one computes the same problem: row-major C = A * B, no transposes,
// alpha = 1, beta = 0, C written without being read.
#ifndef MMLA_BENCH_GEMM_LIBS_HPP
#define MMLA_BENCH_GEMM_LIBS_HPP

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mmla_bench {

// A library failed (a call returned an error, a symbol is missing): the run stops with exit 1.
struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Row-major: A is m x k (lda = k), B is k x n (ldb = n), C is m x n (ldc = n); with b_trans, b and
// b_bf16 hold B transposed, n x k row-major (B column-major, ldb = k: the weights of x W^T).
// a_bf16 and b_bf16 are A and B rounded to bf16 (cblas_sbstobf16, done once per shape, untimed):
// the inputs of the bf16 columns; null when no column takes bf16 inputs.
struct Problem {
  int64_t m, n, k;
  const float* a;
  const float* b;
  const uint16_t* a_bf16 = nullptr;
  const uint16_t* b_bf16 = nullptr;
  bool b_trans = false;
  int64_t ldb() const { return b_trans ? k : n; }
};

// What a column computes, which decides the reference and bound --check uses:
//   kFp32      fp32 A and B, fp32 arithmetic (mmla, OpenBLAS, BLIS, oneDNN, ...)
//   kBf16      A and B given as bf16 (Problem::a_bf16/b_bf16), fp32 accumulation and C
//              (mmla:bf16, OpenBLAS:sb, oneDNN:bf16, oneDNN:bf16pB)
//   kFastMath  fp32 A and B that the library rounds to bf16 itself (mmla:fastmath)
enum class Arith { kFp32, kBf16, kFastMath };

// One library set up for one problem and one output buffer. Everything that may be done once per
// weight matrix (creating a primitive, packing or reordering B) happened when it was made; run()
// is exactly what gets timed.
class GemmRunner {
 public:
  virtual ~GemmRunner() = default;
  virtual void run() = 0;  // C = A * B; throws BenchError on failure
  // What the library chose for this problem, when it says (e.g. oneDNN's "brg:avx512_core").
  virtual std::string impl() const { return {}; }
};

class GemmLib {
 public:
  virtual ~GemmLib() = default;
  // Column name in the table and key in the JSON: "mmla", "mmla:packed", "OpenBLAS", "BLIS",
  // "oneDNN", "oneDNN:pB"; bf16: "mmla:bf16", "mmla:fastmath", "OpenBLAS:sb", "oneDNN:bf16",
  // "oneDNN:bf16pB".
  virtual std::string name() const = 0;
  // True for columns that reuse B prepared once (mmla:packed, oneDNN:pB, oneDNN:bf16pB).
  virtual bool prepacked() const { return false; }
  virtual Arith arith() const { return Arith::kFp32; }
  // One line: which file, version and configuration (printed in the header and the JSON).
  virtual std::string info() const = 0;
  // Untimed set-up for problem p writing into c (m x n, row-major).
  virtual std::unique_ptr<GemmRunner> prepare(const Problem& p, float* c) = 0;
};

struct LibSearch {
  int threads = 1;                 // every library is limited to this many threads
  std::string openblas_path;       // empty: the usual names and Debian paths
  std::string blis_path;           // empty: the usual names and Debian paths
  std::vector<std::string> only;   // column names wanted (as GemmLib::name()); empty: all
  std::vector<std::string> notes;  // out: why a library was not loaded

  bool wants(const std::string& name) const {
    if (only.empty()) return true;
    for (const std::string& o : only)
      if (o == name) return true;
    return false;
  }
};

// Sets the threading environment variables the libraries read when they load (OMP_NUM_THREADS,
// OPENBLAS_NUM_THREADS, BLIS_NUM_THREADS, MMLA_NUM_THREADS). Call first thing in main, before
// any library call.
void set_thread_environment(int threads);

// mmla, mmla:packed, mmla:bf16 (mmla_sbgemm) and mmla:fastmath (mmla_sgemm in bf16 fp-math mode).
void add_mmla_libs(std::vector<std::unique_ptr<GemmLib>>* libs, LibSearch* search);
// OpenBLAS and BLIS, each when dlopen finds it; OpenBLAS:sb when that OpenBLAS has cblas_sbgemm.
void add_dlopen_libs(std::vector<std::unique_ptr<GemmLib>>* libs, LibSearch* search);
// oneDNN plain and prepacked, fp32 and bf16, when the build found it (otherwise adds nothing).
void add_onednn_libs(std::vector<std::unique_ptr<GemmLib>>* libs, LibSearch* search);

// The path of the shared object that defines the symbol at addr ("" if unknown), symlinks resolved.
std::string library_file_of(const void* addr);

}  // namespace mmla_bench

#endif  // MMLA_BENCH_GEMM_LIBS_HPP
