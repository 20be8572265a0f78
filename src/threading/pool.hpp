// The persistent thread pool every GEMM runs on. Kernels and packers never see it: the driver
// splits a problem into independent parts and the team's members claim them one at a time.
//
// One pool per process, started lazily and grown on demand. A call takes the whole pool for the
// duration of one GEMM if it is free, and otherwise runs on the calling thread alone: it never
// waits for another call's workers, so concurrent calls from many application threads cannot
// deadlock and never put more than (pool size) extra threads on the CPUs. A call made from a pool
// worker, from inside a running team, or from inside an OpenMP parallel region also runs alone.
// After fork() the child starts a fresh pool (the parent's workers do not exist there).
//
// Parts are claimed, not assigned: the caller starts on them at once and takes back any offer a
// worker has not picked up by the time the caller runs out of parts. So a worker that wakes late
// (a sleeping thread takes 30 us to milliseconds to run again in a VM, and Linux may queue it behind
// the caller on the caller's own CPU) costs the caller only the wake-up calls; the planner counts
// those and the worker's late start (team_start) when it chooses how many parts to cut.
#pragma once

#include <type_traits>

namespace mmla::threading {

class Team {
 public:
  // Up to `wanted` threads, the caller included; fewer (down to 1) when the pool is busy or the
  // call is nested.
  explicit Team(int wanted);
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  int size() const { return size_; }

  // Calls fn(i) once for every part i in [0, parts), spread over the team's threads as they
  // claim them (the caller claims part 0 first and may end up running every part); returns when
  // all have returned. fn must not throw.
  template <class F>
  void run(int parts, F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run_erased(
        parts, [](void* f, int i) { (*static_cast<Fn*>(f))(i); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  void run_erased(int parts, void (*call)(void*, int), void* fn);
  int size_ = 1;
  void* pool_ = nullptr;  // the pool this team holds, if any
};

// Whether the calling thread is a pool worker or inside Team::run.
bool in_team();

// What starting a team now costs, in microseconds: when the caller can start on its own parts
// (after handing out the job), and when the workers start on theirs. About 1 and 1 while the
// workers still poll after the last team; after they have gone to sleep, the wake-up system calls
// and the workers' own wake-up, as measured on this process's earlier cold starts (in a VM the
// caller spends 40-65 us waking a worker that runs 75-140 us later).
struct TeamStart {
  double caller_us = 1, workers_us = 1;
  bool asleep = false;
};
TeamStart team_start();

// For a call that would take a team if the workers polled, and will not while they sleep: records
// it, and says whether another such call came within the workers' polling time before it. Calls
// in such a stream wake the workers anyway (the wake-up then serves the calls that follow, which
// find them polling); a lone call after a pause runs alone.
bool wanted_team_recently();

}  // namespace mmla::threading
