// The persistent thread pool every GEMM runs on. Kernels and packers never see it: the driver
// splits a problem into independent parts and runs one part per team member.
//
// One pool per process, started lazily and grown on demand. A call takes the whole pool for the
// duration of one GEMM if it is free, and otherwise runs on the calling thread alone: it never
// waits for another call's workers, so concurrent calls from many application threads cannot
// deadlock and never put more than (pool size) extra threads on the CPUs. A call made from a pool
// worker, from inside a running team, or from inside an OpenMP parallel region also runs alone.
// After fork() the child starts a fresh pool (the parent's workers do not exist there).
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

  // Calls fn(t) once for every t in [0, size()): t = 0 on the calling thread, the others on pool
  // workers; returns when all have returned. fn must not throw.
  template <class F>
  void run(F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run_erased([](void* f, int t) { (*static_cast<Fn*>(f))(t); },
               const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  void run_erased(void (*call)(void*, int), void* fn);
  int size_ = 1;
  void* pool_ = nullptr;  // the pool this team holds, if any
};

// Whether the calling thread is a pool worker or inside Team::run.
bool in_team();

// The expected delay, in microseconds, before a worker starts a job handed to it now: about 1 if
// the workers are still polling after the last team, else the measured futex wake-up time.
double start_latency_us();

}  // namespace mmla::threading
