// mmla_get_config(): what was detected and what was chosen, as one readable report.
#include <sstream>

#include "api/problem.hpp"
#include "cpu/cpu.hpp"
#include "mmla/mmla.h"
#include "ukernel/registry.hpp"

namespace {

std::string kib(std::size_t bytes) {
  return bytes >= (8u << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

std::string features_line(const mmla::cpu::Features& f) {
  std::string s;
  const auto add = [&s](bool on, const char* name) {
    if (on) s += std::string(s.empty() ? "" : " ") + name;
  };
#if defined(__x86_64__)
  add(f.avx2, "avx2"), add(f.fma, "fma"), add(f.avx512f, "avx512f"), add(f.avx512bw, "avx512bw");
  add(f.avx512dq, "avx512dq"), add(f.avx512vl, "avx512vl"), add(f.avx512_bf16, "avx512_bf16");
  add(f.avx512_vnni, "avx512_vnni"), add(f.amx_tile, "amx_tile"), add(f.amx_bf16, "amx_bf16");
#elif defined(__aarch64__)
  add(f.asimd, "asimd"), add(f.atomics, "atomics"), add(f.asimddp, "asimddp"), add(f.bf16, "bf16");
  add(f.i8mm, "i8mm"), add(f.sve, "sve"), add(f.sve2, "sve2"), add(f.sme, "sme");
#else
  (void)f, (void)add;
#endif
  return s.empty() ? "(none)" : s;
}

std::string make_report() {
  namespace cpu = mmla::cpu;
  namespace uk = mmla::ukernel;
  const cpu::CpuInfo& info = cpu::info();
  std::ostringstream o;
  o << "mmla " << mmla_version() << "\n";
  o << "cpu: " << info.name << "\n";
  o << "features: " << features_line(info.features) << "\n";
#if defined(__x86_64__)
  o << "amx: " << cpu::amx_status() << "\n";
#endif
  o << "caches: L1d " << kib(info.caches.l1d) << ", L2 " << kib(info.caches.l2) << ", L3 "
    << kib(info.caches.l3) << " (" << info.caches.source << ")\n";
  o << "isa levels detected:";
  for (cpu::Isa isa : cpu::levels())
    if (cpu::detected(isa)) o << " " << cpu::name(isa);
  o << "\n";
  const cpu::IsaCap& cap = cpu::cap();
  if (!cap.error.empty()) {
    o << "MMLA_ISA: ERROR: " << cap.error << "; every GEMM call fails until it is fixed\n";
  } else if (cap.from_env) {
    o << "MMLA_ISA: " << cpu::name(cap.level) << " (dispatch capped at this level)\n";
  } else {
    o << "MMLA_ISA: not set (no cap)\n";
  }
  const uk::Family families[] = {uk::Family::gemm_f32_f32p_f32p, uk::Family::gemm_f32_bf16p_bf16p};
  if (!mmla::api::fpmath_env_error().empty()) {
    o << "fp-math mode: ERROR: " << mmla::api::fpmath_env_error()
      << "; every GEMM call fails until it is fixed\n";
  }
  for (uk::Family family : families) {
    const mmla::api::Selection& s = mmla::api::selection(family);
    o << "kernel " << uk::family_name(family) << ": ";
    if (s.kernel == nullptr) {
      o << "none (" << s.why << ")\n";
      continue;
    }
    o << s.kernel->name << " [MR=" << s.kernel->mr << " NR=" << s.kernel->nr << " KR=" << s.kernel->kr
      << "; MC=" << s.blocking.mc << " KC=" << s.blocking.kc << " NC=" << s.blocking.nc;
    if (s.blocking.a_block_bytes != 0)
      o << " (more than MC rows: blocks of " << s.blocking.a_block_bytes / 1024
        << " KiB of A at the call's depth)";
    o << "; one MC block: KC=" << s.blocking.kc_one_pass << " NC=" << s.blocking.nc_one_pass;
    if (s.blocking.kc_one_pass_b_columns != 0)
      o << " (a B with contiguous columns: KC=" << s.blocking.kc_one_pass_b_columns
        << " NC=" << s.blocking.nc_one_pass_b_columns << ")";
    if (s.blocking.kc_in_place != 0) {
      o << (s.blocking.kc_in_place_cached_b ? " (B read in place: KC=" : " (B from memory read in place: KC=")
        << s.blocking.kc_in_place;
      if (s.blocking.kc_in_place_min_b_bytes != 0)
        o << " for a B over " << s.blocking.kc_in_place_min_b_bytes / 1024 << " KiB";
      o << ")";
    }
    if (s.blocking.a_one_block_bytes != 0)
      o << " (up to " << s.blocking.a_one_block_bytes / 1024 << " KiB of A as one block, B read in place)";
    if (s.blocking.b_packed_by_kernel && s.kernel->run_pack_b != nullptr) {
      o << "; B packed by the kernel";
      if (s.blocking.b_packed_by_kernel_max_kc != 0)
        o << " in calls up to KC=" << s.blocking.b_packed_by_kernel_max_kc;
    }
    if (s.kernel->run_a_in_place != nullptr &&
        s.blocking.a_in_place != mmla::driver::Blocking::AInPlace::kNever)
      o << "; A read in place where its rows lie back to back";
    if (s.blocking.kc_slice != 0)
      o << "; K blocks of " << s.blocking.kc_slice + 1 << "-" << 2 * s.blocking.kc_slice
        << " depths in two slices from " << s.blocking.kc_slice_min_rows
        << " rows (MC=" << s.blocking.mc_sliced << ")";
    o << "; prepacked: KC=" << s.blocking.kc << " NC=" << s.blocking.nc << "]\n";
    o << "  why: " << s.why << "\n";
    if (s.tiles.size() > 1) {
      o << "  tile set (each call takes the one that pads C least):";
      for (const auto& t : s.tiles)
        o << " " << t.kernel->name << " [MC=" << t.blocking.mc << " KC=" << t.blocking.kc
          << " NC=" << t.blocking.nc << "]";
      o << "\n";
    }
  }
  const mmla::api::GemvSelection& g = mmla::api::gemv_selection();
  o << "kernel " << uk::family_name(uk::Family::gemv_f32_f32_f32) << ": "
    << (g.kernel != nullptr ? g.kernel->name : "none") << " [M = 1 or N = 1]\n";
  o << "  why: " << g.why << "\n";
  return o.str();
}

}  // namespace

extern "C" MMLA_API const char* mmla_get_config(void) {
  static const std::string kReport = make_report();
  // The mode can change at run time (per thread, too): that line is added per call.
  const mmla_fpmath_mode mode = mmla::api::fpmath_mode();
  thread_local std::string report;
  report =
      kReport + "threads: " + std::to_string(mmla::api::num_threads()) + " (" +
      mmla::api::num_threads_source() + ")\n" +
      "fp-math mode: " + (mode == MMLA_FPMATH_BF16 ? "bf16" : "strict") +
      " on this thread (MMLA_FPMATH_MODE, mmla_set_fpmath_mode, mmla_set_thread_fpmath_mode)\n" +
      (mmla::api::bf16_hardware()
           ? std::string("  bf16 GEMM and fast math run on ") +
                 mmla::api::selection(mmla::ukernel::Family::gemm_f32_bf16p_bf16p).kernel->name + "\n"
           : std::string(
                 "  no bf16 kernel for this CPU: bf16 inputs are widened to fp32 while packing and the fp32 "
                 "kernel runs; bf16 mode computes as strict\n"));
  return report.c_str();
}
