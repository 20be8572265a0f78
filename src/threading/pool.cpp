#include "threading/pool.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace mmla::threading {
namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// How long a worker keeps polling for the next job, and the caller for its team, before sleeping
// in the kernel: long enough to cover the gaps between the GEMMs of an inference step (a sleeping
// worker takes 35-50 us to wake in a VM, more after a long sleep), short enough that an idle pool
// soon costs nothing. After kPause of pause-polling the poll yields the CPU on every round, so an
// application thread that wants the core gets it (OpenBLAS's workers do the same, for ~0.1 s).
constexpr std::chrono::microseconds kPause{50};
constexpr std::chrono::microseconds kSpin{2000};
// A cold start's costs before this process has measured any (team_start): what the caller spends
// waking its workers and when they start. Intel KVM guest, a worker asleep for 10-50 ms: the futex
// wake 8-17 us and moving the worker off the caller's CPU 32-48 us; the worker runs 75-140 us
// after the offer. Each cold team updates them (kColdWeight: a moving average over ~4 teams).
constexpr double kColdCallerUs = 40, kColdWorkersUs = 100, kColdWeight = 0.25;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Spins on `a` while it holds `old`, then blocks (futex) until it changes.
template <class T>
T wait_while(const std::atomic<T>& a, T old) {
  const auto start = std::chrono::steady_clock::now();
  bool yielding = false;
  for (unsigned i = 1;; ++i) {
    const T v = a.load(std::memory_order_acquire);
    if (v != old) return v;
    if (yielding) {
      sched_yield();
      if (i % 8 == 0 && std::chrono::steady_clock::now() - start > kSpin) break;
    } else {
      cpu_relax();
      if (i % 64 == 0) yielding = std::chrono::steady_clock::now() - start > kPause;
    }
  }
  for (;;) {
    a.wait(old, std::memory_order_acquire);
    const T v = a.load(std::memory_order_acquire);
    if (v != old) return v;
  }
}

struct Job {
  void (*call)(void*, int);
  void* fn;
  int parts;
  std::atomic<int> next{0};  // the next unclaimed part
};

// A worker's slot holds nullptr (idle), the job offered to it, or kTaken once it has claimed that
// job: the caller withdraws an offer only while it is still unclaimed.
Job kTakenJob{nullptr, nullptr, 0};
Job* const kTaken = &kTakenJob;

// Runs parts of `job` until none is left.
void claim_parts(Job& job) {
  for (int i; (i = job.next.fetch_add(1, std::memory_order_relaxed)) < job.parts;) job.call(job.fn, i);
}

struct Pool;

// One slot per worker, on its own cache line: the caller hands a job to exactly the workers of its
// team, so a worker never sees a job that is not its own.
struct alignas(64) Worker {
  std::atomic<Job*> job{nullptr};
  // When it claimed its last job (steady clock ns): written before it reports the job done, read by
  // the caller after it has seen that.
  std::int64_t claimed_ns = 0;
  Pool* pool = nullptr;
  // Its thread id and the CPUs it may run on, published by the worker when it starts (tid != 0).
  std::atomic<pid_t> tid{0};
  cpu_set_t home;
  bool narrowed = false;  // by move_off_callers_cpu; read and written only by the pool's holder
};

// A worker woken after a long sleep can be queued on the caller's own CPU, behind the caller
// (seen in VMs, where the other vCPU, halted for a while, does not count as idle): it would not
// run until the scheduler's next balancing tick, milliseconds later. Leaving it every CPU but the
// caller's makes the kernel move it at once; the caller gives it its CPUs back when the team ends
// (restore_cpus).
void move_off_callers_cpu(Worker& w) {
  const pid_t tid = w.tid.load(std::memory_order_acquire);
  const int cpu = sched_getcpu();
  if (tid == 0 || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &w.home)) return;
  cpu_set_t away = w.home;
  CPU_CLR(cpu, &away);
  w.narrowed = CPU_COUNT(&away) > 0 && sched_setaffinity(tid, sizeof away, &away) == 0;
}
void restore_cpus(Worker& w) {
  if (!w.narrowed) return;
  sched_setaffinity(w.tid.load(std::memory_order_relaxed), sizeof w.home, &w.home);
  w.narrowed = false;
}

thread_local bool t_in_team = false;

void worker_main(Worker* w);

struct Pool {
  std::atomic<bool> busy{false};
  // Team members still running the current job. It lives here, not in the job on the caller's
  // stack: the caller may return the moment it reaches 0, while the last worker still notifies.
  alignas(64) std::atomic<int> pending{0};
  std::atomic<std::int64_t> last_end_ns{0};  // when the last team finished: workers spin for kSpin after
  // Moving averages of the cold starts' costs (team_start), in microseconds.
  std::atomic<double> cold_caller_us{kColdCallerUs}, cold_workers_us{kColdWorkersUs};
  std::atomic<std::int64_t> last_wanted_ns{0};   // wanted_team_recently
  std::vector<std::unique_ptr<Worker>> workers;  // grown only by the holder of `busy`

  // Returns false if no thread could be started (the team then stays smaller).
  bool grow(std::size_t count) {
    // Workers take no signals: asynchronous signals go to application threads.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool ok = true;
    while (workers.size() < count) {
      auto w = std::make_unique<Worker>();
      w->pool = this;
      try {
        std::thread(worker_main, w.get()).detach();
      } catch (...) {
        ok = false;
        break;
      }
      workers.push_back(std::move(w));
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return ok;
  }
};

void worker_main(Worker* w) {
  t_in_team = true;  // a GEMM called from inside a job runs on this thread alone
  if (sched_getaffinity(0, sizeof w->home, &w->home) == 0)
    w->tid.store(static_cast<pid_t>(syscall(SYS_gettid)), std::memory_order_release);
  for (;;) {
    Job* job = wait_while<Job*>(w->job, nullptr);
    // The caller may have withdrawn the offer meanwhile (the slot is then nullptr again).
    if (!w->job.compare_exchange_strong(job, kTaken, std::memory_order_acquire, std::memory_order_relaxed))
      continue;
    w->claimed_ns = now_ns();
    claim_parts(*job);  // the last use of *job
    w->job.store(nullptr, std::memory_order_relaxed);
    if (w->pool->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) w->pool->pending.notify_one();
  }
}

// The pool is never destroyed (workers are detached and may be blocked at exit); a forked child
// abandons the parent's and makes its own.
std::atomic<Pool*> g_pool{nullptr};
std::mutex g_pool_mutex;  // creation; held across fork() so the child never inherits it locked

Pool* pool() {
  Pool* p = g_pool.load(std::memory_order_acquire);
  if (p != nullptr) return p;
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  static const bool kAtFork = [] {
    pthread_atfork([] { g_pool_mutex.lock(); }, [] { g_pool_mutex.unlock(); },
                   [] {
                     g_pool.store(nullptr, std::memory_order_relaxed);
                     g_pool_mutex.unlock();
                   });
    return true;
  }();
  (void)kAtFork;
  p = g_pool.load(std::memory_order_relaxed);
  if (p == nullptr) {
    p = new Pool;
    g_pool.store(p, std::memory_order_release);
  }
  return p;
}

// OpenMP's omp_in_parallel, if the process has an OpenMP runtime loaded: a call from inside a
// framework's parallel region must not add threads of its own.
bool in_openmp_parallel() {
  using Fn = int (*)();
  static const Fn kFn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "omp_in_parallel"));
  return kFn != nullptr && kFn() != 0;
}

}  // namespace

bool in_team() { return t_in_team; }

// Whether the workers are still polling after the last team (with a margin before their spin ends).
bool workers_polling(const Pool& p) {
  const std::int64_t idle_ns = now_ns() - p.last_end_ns.load(std::memory_order_relaxed);
  return idle_ns < std::chrono::nanoseconds(kSpin).count() * 3 / 4;
}

TeamStart team_start() {
  const Pool* p = g_pool.load(std::memory_order_acquire);
  if (p == nullptr) return {kColdCallerUs, kColdWorkersUs, true};
  if (workers_polling(*p)) return {};  // polling workers start within a microsecond
  return {p->cold_caller_us.load(std::memory_order_relaxed),
          p->cold_workers_us.load(std::memory_order_relaxed), true};
}

bool wanted_team_recently() {
  Pool& p = *pool();
  const std::int64_t now = now_ns();
  return now - p.last_wanted_ns.exchange(now, std::memory_order_relaxed) <
         std::chrono::nanoseconds(kSpin).count();
}

namespace {
// Moves a cold-start average towards a new sample (racing updates may lose one: it is an estimate).
void update(std::atomic<double>& average, double sample) {
  const double old = average.load(std::memory_order_relaxed);
  average.store(old + kColdWeight * (sample - old), std::memory_order_relaxed);
}
}  // namespace

Team::Team(int wanted) {
  if (wanted <= 1 || t_in_team || in_openmp_parallel()) return;
  Pool* p = pool();
  if (p->busy.exchange(true, std::memory_order_acquire)) return;
  pool_ = p;
  p->grow(static_cast<std::size_t>(wanted - 1));
  size_ = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(wanted), p->workers.size() + 1));
}

Team::~Team() {
  if (pool_ != nullptr) static_cast<Pool*>(pool_)->busy.store(false, std::memory_order_release);
}

void Team::run_erased(int parts, void (*call)(void*, int), void* fn) {
  Job job{call, fn, parts};
  const bool was = t_in_team;
  const int helpers = std::min(size_, parts) - 1;
  if (helpers <= 0) {
    t_in_team = true;
    claim_parts(job);
    t_in_team = was;
    return;
  }
  // Part 0 is the caller's before any worker can see the job.
  const int first = job.next.fetch_add(1, std::memory_order_relaxed);
  Pool* p = static_cast<Pool*>(pool_);
  const bool asleep = !workers_polling(*p);
  const std::int64_t offered_ns = asleep ? now_ns() : 0;
  p->pending.store(helpers, std::memory_order_relaxed);
  for (int t = 0; t < helpers; ++t) {
    Worker& w = *p->workers[static_cast<std::size_t>(t)];
    w.job.store(&job, std::memory_order_release);
    w.job.notify_one();
    if (asleep) move_off_callers_cpu(w);
  }
  if (asleep) update(p->cold_caller_us, static_cast<double>(now_ns() - offered_ns) * 1e-3);
  t_in_team = true;
  call(fn, first);
  claim_parts(job);
  t_in_team = was;
  // Every part is claimed; a worker that has not picked up its offer yet is not waited for.
  int withdrawn = 0;
  for (int t = 0; t < helpers; ++t) {
    Job* offered = &job;
    if (p->workers[static_cast<std::size_t>(t)]->job.compare_exchange_strong(
            offered, nullptr, std::memory_order_relaxed, std::memory_order_relaxed))
      ++withdrawn;
  }
  int left = withdrawn == 0 ? p->pending.load(std::memory_order_acquire)
                            : p->pending.fetch_sub(withdrawn, std::memory_order_acq_rel) - withdrawn;
  while (left != 0) left = wait_while(p->pending, left);
  for (int t = 0; t < helpers; ++t) restore_cpus(*p->workers[static_cast<std::size_t>(t)]);
  const std::int64_t end_ns = now_ns();
  if (asleep) {
    // The first worker's start; one that missed the whole job started later than it lasted (a
    // lower bound, so it only ever raises the average).
    std::int64_t first_ns = end_ns;
    for (int t = 0; t < helpers; ++t) {
      const std::int64_t claimed = p->workers[static_cast<std::size_t>(t)]->claimed_ns;
      if (claimed >= offered_ns) first_ns = std::min(first_ns, claimed);  // else it claimed an earlier job
    }
    const double us = static_cast<double>(first_ns - offered_ns) * 1e-3;
    if (first_ns < end_ns || us > p->cold_workers_us.load(std::memory_order_relaxed))
      update(p->cold_workers_us, us);
  }
  p->last_end_ns.store(end_ns, std::memory_order_relaxed);
}

}  // namespace mmla::threading
