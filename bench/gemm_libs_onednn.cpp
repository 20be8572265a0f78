// oneDNN matmul, four columns:
//   oneDNN         B handed over as plain row-major memory on every call (what a caller without a
//                  weight cache gets): the primitive is created once, outside the timed region.
//   oneDNN:pB      B reordered once (not timed) into the layout the primitive picks for
//                  format_tag::any: oneDNN's prepacked weights.
//   oneDNN:bf16    as oneDNN with bf16 src and weights (A and B rounded to bf16 once per shape,
//                  Problem::a_bf16/b_bf16) and an f32 dst.
//   oneDNN:bf16pB  as oneDNN:pB with the bf16 weights.
// Timed region of all: execute + stream wait. Built only when CMake found dnnl.hpp and libdnnl.
#include "gemm_libs.hpp"

#if defined(MMLA_BENCH_HAVE_ONEDNN)

#include <dlfcn.h>

#include <dnnl.hpp>
#include <string>

namespace mmla_bench {
namespace {

using dnnl::memory;

std::string runtime_name(unsigned runtime) {
  switch (runtime) {
    case DNNL_RUNTIME_NONE: return "none";
    case DNNL_RUNTIME_SEQ: return "sequential";
    case DNNL_RUNTIME_OMP: return "OpenMP";
    case DNNL_RUNTIME_TBB: return "TBB";
    case DNNL_RUNTIME_THREADPOOL: return "threadpool";
    default: return "runtime " + std::to_string(runtime);
  }
}

dnnl::matmul::primitive_desc make_pd(const dnnl::engine& eng, const memory::desc& a, const memory::desc& b,
                                     const memory::desc& c) {
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(eng, a, b, c);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), eng);
#endif
}

class OnednnRunner final : public GemmRunner {
 public:
  OnednnRunner(dnnl::engine& eng, dnnl::stream& strm, const Problem& p, float* c, bool prepack, bool bf16)
      : strm_(strm) {
    const memory::dims a_dims{p.m, p.k}, b_dims{p.k, p.n}, c_dims{p.m, p.n};
    const auto f32 = memory::data_type::f32;
    const auto in = bf16 ? memory::data_type::bf16 : f32;
    const auto plain = memory::format_tag::ab;  // row-major
    // B transposed (Problem::b_trans): k x n with strides (1, k).
    const memory::desc b_md =
        p.b_trans ? memory::desc(b_dims, in, memory::dims{1, p.k}) : memory::desc(b_dims, in, plain);
    const memory::desc a_md(a_dims, in, plain), c_md(c_dims, f32, plain);
    const memory::desc b_any = prepack ? memory::desc(b_dims, in, memory::format_tag::any) : b_md;
    if (bf16 && (p.a_bf16 == nullptr || p.b_bf16 == nullptr)) throw BenchError("oneDNN:bf16: no bf16 inputs");
    void* a_data = bf16 ? const_cast<uint16_t*>(p.a_bf16) : static_cast<void*>(const_cast<float*>(p.a));
    void* b_data = bf16 ? const_cast<uint16_t*>(p.b_bf16) : static_cast<void*>(const_cast<float*>(p.b));
    pd_ = make_pd(eng, a_md, b_any, c_md);
    prim_ = dnnl::matmul(pd_);
    a_ = memory(a_md, eng, a_data);
    c_ = memory(c_md, eng, c);
    memory b_user(b_md, eng, b_data);
    if (prepack && pd_.weights_desc() != b_md) {
      b_ = memory(pd_.weights_desc(), eng);
      dnnl::reorder(b_user, b_).execute(strm_, b_user, b_);
      strm_.wait();
      reordered_ = true;
    } else {
      b_ = b_user;
    }
  }
  void run() override {
    prim_.execute(strm_, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
    strm_.wait();
  }
  std::string impl() const override {
    std::string s = pd_.impl_info_str();
    if (reordered_) s += ", B reordered";
    return s;
  }

 private:
  dnnl::stream& strm_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul prim_;
  memory a_, b_, c_;
  bool reordered_ = false;
};

// Engine and stream shared by all columns.
struct OnednnContext {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
};

class OnednnLib final : public GemmLib {
 public:
  OnednnLib(std::shared_ptr<OnednnContext> ctx, bool prepack, bool bf16, std::string info)
      : ctx_(std::move(ctx)), prepack_(prepack), bf16_(bf16), info_(std::move(info)) {}
  std::string name() const override {
    return std::string(bf16_ ? "oneDNN:bf16" : "oneDNN") + (prepack_ ? (bf16_ ? "pB" : ":pB") : "");
  }
  bool prepacked() const override { return prepack_; }
  Arith arith() const override { return bf16_ ? Arith::kBf16 : Arith::kFp32; }
  std::string info() const override { return info_; }
  std::unique_ptr<GemmRunner> prepare(const Problem& p, float* c) override {
    try {
      return std::make_unique<OnednnRunner>(ctx_->eng, ctx_->strm, p, c, prepack_, bf16_);
    } catch (const dnnl::error& e) {
      throw BenchError(name() + ": " + e.what());
    }
  }

 private:
  std::shared_ptr<OnednnContext> ctx_;
  bool prepack_, bf16_;
  std::string info_;
};

}  // namespace

void add_onednn_libs(std::vector<std::unique_ptr<GemmLib>>* libs, LibSearch* search) {
  if (!search->wants("oneDNN") && !search->wants("oneDNN:pB") && !search->wants("oneDNN:bf16") &&
      !search->wants("oneDNN:bf16pB"))
    return;
  const dnnl_version_t* v = dnnl_version();
  std::string info = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                     std::to_string(v->patch) + " " +
                     library_file_of(reinterpret_cast<const void*>(&dnnl_version)) + ": " +
                     runtime_name(v->cpu_runtime) + " runtime";
  if (v->cpu_runtime == DNNL_RUNTIME_OMP) {
    // libgomp read OMP_NUM_THREADS when it was loaded, before main: set the ICV of this (the
    // calling) thread instead. Looked up rather than linked so the bench needs no OpenMP flags.
    using SetThreads = void (*)(int);
    using GetThreads = int (*)();
    const auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    const auto get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    if (set) set(search->threads);
    if (get) info += ", " + std::to_string(get()) + " thread(s)";
  }
  bool bf16_ok = true;
  try {
    auto ctx = std::make_shared<OnednnContext>();
    if (search->wants("oneDNN:bf16") || search->wants("oneDNN:bf16pB")) {
      // Not every CPU has a bf16 matmul (oneDNN needs AVX-512 at least): ask once, on a small one.
      try {
        const memory::desc in({16, 16}, memory::data_type::bf16, memory::format_tag::ab);
        const memory::desc out({16, 16}, memory::data_type::f32, memory::format_tag::ab);
        make_pd(ctx->eng, in, in, out);
      } catch (const dnnl::error& e) {
        search->notes.push_back(std::string("oneDNN:bf16: no bf16 matmul on this CPU (") + e.what() +
                                "): no oneDNN:bf16/oneDNN:bf16pB columns");
        bf16_ok = false;
      }
    }
    const std::string reordered = ", B reordered once to format_tag::any";
    const std::string bf16 = ", bf16 src and weights, f32 dst";
    if (search->wants("oneDNN")) libs->push_back(std::make_unique<OnednnLib>(ctx, false, false, info));
    if (search->wants("oneDNN:pB"))
      libs->push_back(std::make_unique<OnednnLib>(ctx, true, false, info + reordered));
    if (bf16_ok && search->wants("oneDNN:bf16"))
      libs->push_back(std::make_unique<OnednnLib>(ctx, false, true, info + bf16));
    if (bf16_ok && search->wants("oneDNN:bf16pB"))
      libs->push_back(std::make_unique<OnednnLib>(ctx, true, true, info + bf16 + reordered));
  } catch (const dnnl::error& e) {
    search->notes.push_back(std::string("oneDNN: no CPU engine: ") + e.what());
  }
}

}  // namespace mmla_bench

#else  // !MMLA_BENCH_HAVE_ONEDNN

namespace mmla_bench {
void add_onednn_libs(std::vector<std::unique_ptr<GemmLib>>* /*libs*/, LibSearch* search) {
  if (search->wants("oneDNN") || search->wants("oneDNN:pB") || search->wants("oneDNN:bf16") ||
      search->wants("oneDNN:bf16pB"))
    search->notes.push_back("oneDNN: not built in (CMake found no dnnl.hpp/libdnnl)");
}
}  // namespace mmla_bench

#endif
