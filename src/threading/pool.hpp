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
// the caller on the caller's own CPU) costs the caller nothing but the wake-up call: the GEMM is
// then no slower than on one thread.
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

// What starting a team now costs the caller, in microseconds: about 1 if the workers are still
// polling after the last team, else the system call that wakes them (a late worker costs nothing
// more: see above).
double start_latency_us();

}  // namespace mmla::threading
