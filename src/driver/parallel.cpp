// Splitting one GEMM over threads. Each part is an ordinary sub-problem solved by the single-thread
// driver with its own packing buffers, so parts share nothing but C's disjoint blocks (or, for K
// slices, write private buffers). The cost is some packing done twice (each part packs the rows of
// A and the columns of B it uses); the model below counts it when choosing the split.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>

#include "driver/gemm_driver.hpp"
#include "threading/pool.hpp"

namespace mmla::driver {
namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Costs are in kernel multiply-adds. Packing one element costs about as much as this many of
// them (a copy or conversion at a few elements per cycle against 32+ FMAs per cycle).
constexpr double kPackCost = 16;
// Multiply-adds one thread does per microsecond (fp32 ~120 GFLOPS, bf16 ~600: what one thread
// sustains on mid-size calls on the Intel VM, fp32 nearer than its peak to what a cold call runs
// at; bf16 as AMX runs it, as a lower rate made 64x128x128 take two threads that lost 8%),
// to price when a team's threads start (threading::team_start: ~1 us if the workers are polling,
// tens of us if they sleep); and for the memory-bound GEMV, elements streamed per microsecond
// (~50 GB/s of fp32 from caches, ~16 from memory beyond 8 MiB). Overestimates make threading more
// cautious.
double fmas_per_us(const ukernel::GemmKernel& k) { return k.elem_size == 2 ? 3e5 : 6e4; }
// The dots (few rows, GemvKernel::dots) do `rows` multiply-adds per element of X, at up to ~100
// GFLOPS.
double gemv_elems_per_us(double elems, std::size_t rows) {
  return std::min(elems * sizeof(float) <= (8 << 20) ? 12e3 : 4e3, 5e4 / static_cast<double>(rows));
}
// The fixed cost of any team beyond the wake-up (handing out jobs, the final wait), in microseconds.
constexpr double kTeamOverheadUs = 2;
// Workers that start this much later than the caller (they were asleep) get smaller parts than the
// caller's, which is part 0 (Partition::lead).
constexpr double kLateStartUs = 10;
bool workers_late(threading::TeamStart start) { return start.workers_us - start.caller_us > kLateStartUs; }

// No team can finish before its first thread starts plus its share of `work` (multiply-adds, or
// streamed elements for the GEMV, at `rate` a microsecond).
bool team_cannot_pay(double work, int threads, threading::TeamStart start, double rate) {
  return work * (1.0 - 1.0 / threads) <=
         (std::min(start.caller_us, start.workers_us) + kTeamOverheadUs) * rate;
}

// A split of one axis of `units` units into `parts` parts, part 0 the caller's: `lead` units for
// it (0: an even split) and when the last part ends, `time` (in multiply-adds).
struct AxisSplit {
  std::size_t lead;
  double time;
};
// `cost(u)` is what a part of u units costs. The caller starts at `caller`, the workers at `workers`:
// when they start late, part 0 takes more units, as many as make both end together if costs grow
// in proportion to units (a worker later still finds part 0 done and its own part unclaimed, so
// the caller takes it too: then the call takes as long as on one thread, plus the wake-up).
template <class Cost>
AxisSplit split_axis(std::size_t units, int parts, double caller, double workers, const Cost& cost) {
  const auto p = static_cast<std::size_t>(parts);
  const std::size_t even = ceil_div(units, p);
  const double even_cost = cost(even);
  AxisSplit best{0, std::max(caller, workers) + even_cost};
  if (workers - caller <= 0 || units <= p) return best;
  const double per_unit = even_cost / static_cast<double>(even);
  const double share =
      ((workers - caller) / per_unit + static_cast<double>(units) / (parts - 1)) * (parts - 1) / parts;
  const std::size_t lead =
      std::clamp<std::size_t>(static_cast<std::size_t>(share + 0.5), even, units - (p - 1));
  if (lead == even) return best;
  const double time = std::max(caller + cost(lead), workers + cost(ceil_div(units - lead, p - 1)));
  if (time < best.time) best = {lead, time};
  return best;
}
// Reading an element of B in place costs about this many multiply-adds: cheaper than packing it,
// which also writes (at M = 8 a call takes ~1.8x its multiply-adds' time on the Intel VM).
constexpr double kInPlaceCost = 8;
// Reading a packed B (prepacked, or packed for the call) costs about this many multiply-adds per
// element, once per MC block of the part's rows: it streams from L3 or beyond, and parts that split
// M each stream all of it at the same time. Zen 4, 2 threads, a prepacked B, halves of M vs halves
// of N (mmla-bench GFLOPS): fp32 32x3072x768 203-216 vs 220-225, 128x768x3072 186-209 vs 203-221,
// bf16 128x3072x768 384-420 vs 435-449; squares and 768x768 even within the noise.
constexpr double kPackedReadCost = 1;
// Parts that split N and read B in place in shallow K blocks each take a piece of every row of B;
// a piece shorter than a page ran as slowly as the whole row (docs/threading.md), so it is priced
// as the row, up to a page.
// Elements a part pays for reading `piece` of each line of `line` elements: a piece shorter than a
// page costs the whole line, up to a page (kPageBytes).
double line_piece_cost(double piece, double line, double elem_bytes) {
  const auto page = static_cast<double>(kPageBytes);
  return piece * elem_bytes < page ? std::min(line, page / elem_bytes) : piece;
}
// Parts that split C's lines (its rows, for a row-major C) into pieces shorter than a page write
// into the same pages as their neighbours, and each core's L2 prefetcher, which follows a stream
// within a page, pulls the neighbour's lines of C away from it. That costs about this many
// microseconds per element of C and pass over it (each K block, each slice), whatever the kernel.
// Golden Cove VM, 2 threads, halves of N writing C in place vs into buffers of their own: bf16 512^3
// 1330 vs 1703 GFLOPS, 128x768x768 1402 vs 1719 (0.17-0.2 ns an element and pass), 128x768x3072
// 1233 vs 1370 (12 passes, 0.09 ns); fp32 128x768x768 271 vs 289. Priced at 0.05 ns: at 0.1 ns
// 128x768x3072 took halves of M, which ran at 1042 (docs/threading.md).
constexpr double kSharedPageUs = 5e-5;

// K slices are at least this deep (shallower ones only add reduction traffic), and start on
// multiples of kKAlign (a multiple of every kernel's KR).
constexpr std::size_t kMinKSlice = 256, kKAlign = 64;

// Part `idx` of `parts` of [0, total) in units of `align` (the last unit may be partial): part 0
// takes `lead` units if that is not 0 and the others share the rest evenly, else all share evenly.
struct Range {
  std::size_t begin, size;
};
Range split(std::size_t total, int parts, int idx, std::size_t align, std::size_t lead) {
  const std::size_t units = ceil_div(total, align);
  lead = std::min(lead, units);
  const auto edge = [&](int i) {
    if (lead == 0 || parts == 1) return units * static_cast<std::size_t>(i) / static_cast<std::size_t>(parts);
    if (i == 0) return std::size_t{0};
    return lead + (units - lead) * static_cast<std::size_t>(i - 1) / static_cast<std::size_t>(parts - 1);
  };
  const std::size_t b = edge(idx) * align, e = edge(idx + 1) * align;
  return {std::min(b, total), std::min(e, total) - std::min(b, total)};
}

// Alignment of part edges: rows and columns on the kernel's MR/NR (no partial tile inside C), a
// prepacked B's columns on its NR (parts start at a micro-panel).
struct Align {
  std::size_t m, n, k;
};

// Runs the parts of `part` (on the team's threads as they claim them); K slices other than the
// first write to private buffers that are added into C at the end.
template <class Solve>
Status run_parts(const GemmProblem& p, Partition part, Align al, threading::Team* team, Solve&& solve) {
  const int parts = part.threads();
  if (parts == 1) return solve(p);
  if (part.tk > 1 && p.b_packed != nullptr) return Status::not_applicable;  // its blocks fix K's split
  const std::size_t src_elem = ukernel::kElemBytes[static_cast<int>(p.src)];
  // K slices 1.. write m x n row-major partial products here.
  std::unique_ptr<float, decltype(&std::free)> partial(nullptr, &std::free);
  if (part.tk > 1) {
    const std::size_t bytes = (static_cast<std::size_t>(part.tk) - 1) * p.m * p.n * sizeof(float);
    partial.reset(static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
    if (partial == nullptr) return Status::out_of_memory;
  }
  std::atomic<bool> failed{false}, oom{false};
  const auto solve_part = [&](int t) {
    const int ik = t / (part.tm * part.tn), im = t % (part.tm * part.tn) / part.tn, in = t % part.tn;
    const Range rm = split(p.m, part.tm, im, al.m, part.lead), rn = split(p.n, part.tn, in, al.n, part.lead);
    const Range rk = split(p.k, part.tk, ik, al.k, part.lead);
    if (rm.size == 0 || rn.size == 0) return;
    GemmProblem s = p;
    s.m = rm.size, s.n = rn.size, s.k = rk.size;
    s.b_call_bytes = call_b_bytes(p);
    s.call_parts = parts;
    const auto at = [src_elem](const void* base, std::size_t i, std::ptrdiff_t stride) {
      return static_cast<const char*>(base) +
             static_cast<std::ptrdiff_t>(i) * stride * static_cast<std::ptrdiff_t>(src_elem);
    };
    s.a = at(p.a, rm.begin, p.a_rs);
    s.a = at(s.a, rk.begin, p.a_cs);
    if (p.b_packed != nullptr) {
      s.b_col0 = p.b_col0 + rn.begin;  // K is never split with a prepacked B (see the planners)
    } else {
      s.b = at(p.b, rn.begin, p.b_cs);
      s.b = at(s.b, rk.begin, p.b_rs);
    }
    if (ik == 0) {
      s.c = p.c + static_cast<std::ptrdiff_t>(rm.begin) * p.c_rs +
            static_cast<std::ptrdiff_t>(rn.begin) * p.c_cs;
    } else {
      s.c = partial.get() + (static_cast<std::size_t>(ik) - 1) * p.m * p.n + rm.begin * p.n + rn.begin;
      s.c_rs = static_cast<std::ptrdiff_t>(p.n), s.c_cs = 1, s.beta = 0.0f;
    }
    if (s.k == 0 && ik > 0) {  // an empty slice contributes zeros
      for (std::size_t i = 0; i < s.m; ++i) std::fill(s.c + i * p.n, s.c + i * p.n + s.n, 0.0f);
      return;
    }
    const Status st = solve(s);
    if (st != Status::ok) (st == Status::out_of_memory ? oom : failed).store(true);
  };
  if (team != nullptr) {
    team->run(parts, solve_part);
  } else {
    for (int t = 0; t < parts; ++t) solve_part(t);
  }
  if (oom.load()) return Status::out_of_memory;
  if (failed.load()) return Status::not_applicable;
  for (int s = 1; s < part.tk; ++s) {
    const float* src = partial.get() + (static_cast<std::size_t>(s) - 1) * p.m * p.n;
    for (std::size_t i = 0; i < p.m; ++i) {
      float* row = p.c + static_cast<std::ptrdiff_t>(i) * p.c_rs;
      for (std::size_t j = 0; j < p.n; ++j) row[static_cast<std::ptrdiff_t>(j) * p.c_cs] += src[i * p.n + j];
    }
  }
  return Status::ok;
}

// Where a prepacked B's columns may be split: at micro-panel starts, which are multiples of NR
// when its NC is (as blocking_for makes it), else only at NC block starts.
std::size_t packed_column_align(const PackedBLayout& l) {
  const auto nr = static_cast<std::size_t>(l.kernel->nr);
  return l.nc % nr == 0 ? nr : l.nc;
}

Align gemm_align(const ukernel::GemmKernel& kernel, const GemmProblem& p) {
  const std::size_t n = p.b_packed ? packed_column_align(*p.b_layout) : static_cast<std::size_t>(kernel.nr);
  return {static_cast<std::size_t>(kernel.mr), n, kKAlign};
}

Align gemv_align(const GemmProblem& p) {
  // Otherwise a cache line of outputs per part.
  return {16, p.b_packed != nullptr ? packed_column_align(*p.b_layout) : 16, kKAlign};
}

bool k_split_possible(const GemmProblem& p, int parts) {
  return p.b_packed == nullptr && p.k >= kMinKSlice * static_cast<std::size_t>(parts);
}

// An upper bound of plan_gemm's price of the whole problem on one thread: every element of A and
// B packed (and a packed B read once per MC block).
double work_bound(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p) {
  const Align al = gemm_align(kernel, p);
  const double mp = static_cast<double>(ceil_div(p.m, al.m) * al.m);
  const double np = static_cast<double>(ceil_div(p.n, al.n) * al.n), k = static_cast<double>(p.k);
  const double nc = static_cast<double>(std::max<std::size_t>(blocking.nc, 1));
  const double a_blocks = std::ceil(mp / static_cast<double>(std::max<std::size_t>(blocking.mc, 1)));
  return mp * np * k + kPackCost * mp * k * std::ceil(np / nc) +
         (kPackCost + kPackedReadCost * a_blocks) * k * np;
}

}  // namespace

Partition plan_gemm(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p,
                    int threads, threading::TeamStart start) {
  Partition best;
  if (threads <= 1 || p.k == 0 || p.alpha == 0.0f) return best;
  const double rate = fmas_per_us(kernel);
  const double caller = start.caller_us * rate, workers = start.workers_us * rate;
  const double team_cost = kTeamOverheadUs * rate;
  const Align al = gemm_align(kernel, p);
  const double k = static_cast<double>(p.k);
  const double nc = static_cast<double>(std::max<std::size_t>(blocking.nc, 1));
  const std::size_t tiles_m = ceil_div(p.m, al.m), tiles_n = ceil_div(p.n, al.n);
  // First with a bound of the work, which spares a small call the pricing; below with its price.
  if (team_cannot_pay(work_bound(kernel, blocking, p), threads, start, rate)) return best;
  const bool pack_b = p.b_packed == nullptr;
  const double src_bytes = static_cast<double>(ukernel::kElemBytes[static_cast<int>(p.src)]);
  // What a part of mt x nt x kt (tm x tn parts across M and N) pays for its columns of B: packing
  // them, or reading them in place. A B from memory comes through one memory bus shared by all
  // parts, and each of the tm parts along M fetches all of it: tm times the cost (2 threads, bf16
  // 64x4096x4096 on Zen 4: halves of M each reading all of B in place 10.4 ms, halves of N packing
  // half of it each 6.9 ms).
  const auto b_cost = [&](std::size_t mt, std::size_t nt, std::size_t kt, int tm, int tn) {
    GemmProblem part = p;
    part.m = std::min(mt, p.m), part.n = std::min(nt, p.n), part.k = kt;
    part.b_call_bytes = call_b_bytes(p);
    const double shared = b_from_memory(part) ? tm : 1;
    if (!reads_b_in_place(kernel, blocking, part)) {
      const double a_blocks = std::ceil(static_cast<double>(part.m) / static_cast<double>(blocking.mc));
      return shared * ((pack_b ? kPackCost : 0.0) + kPackedReadCost * a_blocks) *
             static_cast<double>(kt * nt);
    }
    const double n_t = static_cast<double>(part.n);
    const double read = tn > 1 && reads_b_in_place_shallow(kernel, blocking, part)
                            ? line_piece_cost(n_t, static_cast<double>(p.n), src_bytes)
                            : n_t;
    return shared * kInPlaceCost * static_cast<double>(kt) * read;
  };
  // What a part of mt x kt pays for its rows of A: packing them once per NC block of its nt
  // columns, or nothing when the kernel reads them in place (parts that split N then share A at no
  // cost, which lets them take the split that balances the tiles).
  const auto a_cost = [&](std::size_t mt, std::size_t nt, std::size_t kt) {
    GemmProblem part = p;
    part.m = std::min(mt, p.m), part.n = std::min(nt, p.n), part.k = kt;
    if (reads_a_in_place(kernel, blocking, part, call_blocking(kernel, blocking, part).kc)) return 0.0;
    return kPackCost * static_cast<double>(mt * kt) * std::ceil(static_cast<double>(nt) / nc);
  };
  // What a part of mt x nt pays for writing C in pages that a neighbouring part writes too: when
  // the split cuts C's lines into pieces shorter than a page (kSharedPageUs).
  const bool c_rows = p.c_cs == 1, c_cols = !c_rows && p.c_rs == 1;
  const auto c_cost = [&](std::size_t mt, std::size_t nt, int tm, int tn) {
    const std::size_t piece = c_rows ? nt : mt;
    if (!((c_rows && tn > 1) || (c_cols && tm > 1)) || piece * sizeof(float) >= kPageBytes) return 0.0;
    GemmProblem part = p;
    part.m = std::min(mt, p.m), part.n = std::min(nt, p.n);
    const Blocking b = call_blocking(kernel, blocking, part);
    const double passes =
        std::ceil(k / static_cast<double>(std::max<std::size_t>(b.kc, 1))) * (b.kc_slice != 0 ? 2 : 1);
    return kSharedPageUs * rate * static_cast<double>(part.m * part.n) * passes;
  };
  // A part's time: its products plus what its rows of A, its columns of B and its piece of C cost.
  const auto part_time = [&](std::size_t mt, std::size_t nt, int tm, int tn) {
    return static_cast<double>(mt) * static_cast<double>(nt) * k + a_cost(mt, nt, p.k) +
           b_cost(mt, nt, p.k, tm, tn) + c_cost(mt, nt, tm, tn);
  };
  double best_cost = part_time(tiles_m * al.m, tiles_n * al.n, 1, 1);
  if (team_cannot_pay(best_cost, threads, start, rate)) return best;
  const bool late = workers_late(start);
  for (int t = 2; t <= threads; ++t) {
    for (int tm = 1; tm <= t; ++tm) {
      if (t % tm != 0) continue;
      const int tn = t / tm;
      if (static_cast<std::size_t>(tm) > tiles_m || static_cast<std::size_t>(tn) > tiles_n) continue;
      const std::size_t mt = ceil_div(tiles_m, static_cast<std::size_t>(tm)) * al.m;
      const std::size_t nt = ceil_div(tiles_n, static_cast<std::size_t>(tn)) * al.n;
      AxisSplit s{0, std::max(caller, workers) + part_time(mt, nt, tm, tn)};
      if (late && tn == 1)
        s = split_axis(tiles_m, t, caller, workers,
                       [&](std::size_t u) { return part_time(u * al.m, nt, tm, tn); });
      else if (late && tm == 1)
        s = split_axis(tiles_n, t, caller, workers,
                       [&](std::size_t u) { return part_time(mt, u * al.n, tm, tn); });
      if (s.time + team_cost < best_cost) best_cost = s.time + team_cost, best = {tm, tn, 1, s.lead};
    }
    // K slices cost a reduction and buffers: only when C has fewer tiles than threads, or when
    // the slices read B in place (each then reads whole rows of B).
    const std::size_t kt = ceil_div(ceil_div(p.k, kKAlign), static_cast<std::size_t>(t)) * kKAlign;
    GemmProblem slice = p;
    slice.k = std::min(kt, p.k);
    slice.b_call_bytes = call_b_bytes(p);
    if ((tiles_m * tiles_n < static_cast<std::size_t>(t) || reads_b_in_place(kernel, blocking, slice)) &&
        k_split_possible(p, t)) {
      const std::size_t m_p = tiles_m * al.m, n_p = tiles_n * al.n;
      const double m = static_cast<double>(m_p), n = static_cast<double>(n_p);
      const double reduction = kPackCost * m * n * t;
      const auto slice_time = [&](std::size_t depth) {
        return m * n * static_cast<double>(depth) + a_cost(m_p, n_p, depth) + b_cost(m_p, n_p, depth, 1, 1);
      };
      AxisSplit s{0, std::max(caller, workers) + m * n * k / t + a_cost(m_p, n_p, slice.k) +
                         b_cost(m_p, n_p, slice.k, 1, 1)};
      if (late) {
        const AxisSplit u = split_axis(ceil_div(p.k, kKAlign), t, caller, workers, [&](std::size_t units) {
          return slice_time(std::min(units * kKAlign, p.k));
        });
        if (u.lead != 0 && u.time < s.time) s = u;
      }
      if (s.time + reduction + team_cost < best_cost)
        best_cost = s.time + reduction + team_cost, best = {1, 1, t, s.lead};
    }
  }
  return best;
}

Partition plan_gemv(const GemmProblem& p, int threads, threading::TeamStart start) {
  Partition best;
  if (threads <= 1 || p.k == 0 || p.alpha == 0.0f) return best;
  // X is B (its columns are the outputs' lines) for a row vector, and for the dots when rows are few.
  const bool row = p.m == 1 || (p.n != 1 && dots_x_is_b(p));
  const std::size_t len = row ? p.n : p.m, align = row ? gemv_align(p).n : gemv_align(p).m;
  const double rate = gemv_elems_per_us(static_cast<double>(len) * p.k, row ? p.m : p.n);
  const double caller = start.caller_us * rate, workers = start.workers_us * rate;
  const double team_cost = kTeamOverheadUs * rate;
  const bool late = workers_late(start);
  const double k = static_cast<double>(p.k);
  // X streamed along its contiguous dimension (the axpy form, X not prepacked): splitting the output
  // gives each part a piece of every line of X, priced as the whole line up to a page, as in
  // plan_gemm; K slices then read whole lines.
  const bool lines_in_pieces = p.b_packed == nullptr && (row ? p.b_cs : p.a_rs) == 1;
  const double src_bytes = static_cast<double>(ukernel::kElemBytes[static_cast<int>(p.src)]);
  double best_cost = static_cast<double>(len) * k;
  if (team_cannot_pay(best_cost, threads, start, rate)) return best;
  const std::size_t units = ceil_div(len, align);
  const auto output_time = [&](std::size_t u) {
    const double part = static_cast<double>(u * align);
    return (lines_in_pieces ? line_piece_cost(part, static_cast<double>(len), src_bytes) : part) * k;
  };
  const auto slice_time = [&](std::size_t u) {
    return static_cast<double>(len) * static_cast<double>(std::min(u * kKAlign, p.k));
  };
  for (int t = 2; t <= threads; ++t) {
    if (units >= static_cast<std::size_t>(t)) {
      AxisSplit s{0, std::max(caller, workers) + output_time(ceil_div(units, static_cast<std::size_t>(t)))};
      if (late) s = split_axis(units, t, caller, workers, output_time);
      if (s.time + team_cost < best_cost)
        best_cost = s.time + team_cost, best = row ? Partition{1, t, 1, s.lead} : Partition{t, 1, 1, s.lead};
    }
    if ((units < static_cast<std::size_t>(t) || lines_in_pieces) && k_split_possible(p, t)) {
      AxisSplit s{0, std::max(caller, workers) + static_cast<double>(len) * k / t};
      if (late) {
        const AxisSplit u = split_axis(ceil_div(p.k, kKAlign), t, caller, workers, slice_time);
        if (u.lead != 0 && u.time < s.time) s = u;
      }
      const double cost = s.time + static_cast<double>(len) * t + team_cost;
      if (cost < best_cost) best_cost = cost, best = {1, 1, t, s.lead};
    }
  }
  return best;
}

Status gemm_partitioned(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p,
                        Partition part) {
  return run_parts(p, part, gemm_align(kernel, p), nullptr,
                   [&](const GemmProblem& s) { return gemm(kernel, blocking, s); });
}

Status gemv_partitioned(const ukernel::GemvKernel& kernel, const GemmProblem& p, Partition part) {
  // As gemv() for the whole (some parts of a problem it refuses could be vectors it takes).
  if (!gemv_applicable(p)) return Status::not_applicable;
  return run_parts(p, part, gemv_align(p), nullptr, [&](const GemmProblem& s) { return gemv(kernel, s); });
}

namespace {
// The plan for a team that starts as team_start says, except in a stream of calls that each run
// alone only because the workers sleep: there a call takes the team it would take from polling
// workers, and wakes them for the calls that follow (threading::wanted_team_recently).
template <class Plan>
Partition plan_now(threading::TeamStart& start, const Plan& plan) {
  const Partition part = plan(start);
  if (part.threads() > 1 || !start.asleep) return part;
  const Partition polling = plan(threading::TeamStart{});
  if (polling.threads() == 1 || !threading::wanted_team_recently()) return part;
  start = threading::TeamStart{};
  return polling;
}
}  // namespace

Status gemm_threaded(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p,
                     int threads) {
  // Too small for even polling workers (the cheapest start): no need to ask the pool or plan.
  if (threads <= 1 ||
      team_cannot_pay(work_bound(kernel, blocking, p), threads, threading::TeamStart{}, fmas_per_us(kernel)))
    return gemm_small(kernel, p) == Status::ok ? Status::ok : gemm(kernel, blocking, p);
  threading::TeamStart start = threading::team_start();
  Partition part =
      plan_now(start, [&](threading::TeamStart s) { return plan_gemm(kernel, blocking, p, threads, s); });
  if (part.threads() == 1) return gemm(kernel, blocking, p);
  threading::Team team(part.threads());
  if (team.size() < part.threads()) part = plan_gemm(kernel, blocking, p, team.size(), start);
  if (part.threads() == 1) return gemm(kernel, blocking, p);
  return run_parts(p, part, gemm_align(kernel, p), &team,
                   [&](const GemmProblem& s) { return gemm(kernel, blocking, s); });
}

Status gemv_threaded(const ukernel::GemvKernel& kernel, const GemmProblem& p, int threads) {
  if (!gemv_applicable(p)) return Status::not_applicable;
  threading::TeamStart start = threading::team_start();
  Partition part = plan_now(start, [&](threading::TeamStart s) { return plan_gemv(p, threads, s); });
  if (part.threads() == 1) return gemv(kernel, p);
  threading::Team team(part.threads());
  if (team.size() < part.threads()) part = plan_gemv(p, team.size(), start);
  if (part.threads() == 1) return gemv(kernel, p);
  return run_parts(p, part, gemv_align(p), &team, [&](const GemmProblem& s) { return gemv(kernel, s); });
}

}  // namespace mmla::driver
