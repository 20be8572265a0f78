// Threads through the public API: the thread-count controls, many application threads calling at
// once (fp32, bf16, fast math, prepacked, GEMV shapes), calls from inside a pool job, fork().
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "mmla/cblas.h"
#include "mmla/mmla.h"
#include "support/reference.hpp"
#include "threading/cpus.hpp"
#include "threading/pool.hpp"

namespace mmla::test {
namespace {

int budget() { return threading::cpu_budget().count; }

// Restores the default thread count after each test.
class Threads : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_EQ(mmla_set_num_threads(0), MMLA_STATUS_SUCCESS); }
};

TEST_F(Threads, DefaultIsTheCpuBudgetOrTheEnvironment) {
  int expect = budget();
  if (const char* e = std::getenv("MMLA_NUM_THREADS")) expect = std::min(std::atoi(e), budget());
  EXPECT_EQ(mmla_get_num_threads(), expect) << threading::cpu_budget().describe;
  if (const char* e = std::getenv("MMLA_TEST_EXPECT_THREADS")) {
    EXPECT_EQ(mmla_get_num_threads(), std::atoi(e));
  }
  EXPECT_NE(std::string(mmla_get_config()).find("threads: " + std::to_string(mmla_get_num_threads())),
            std::string::npos)
      << mmla_get_config();
}

TEST_F(Threads, SetGetAndCap) {
  ASSERT_EQ(mmla_set_num_threads(1), MMLA_STATUS_SUCCESS);
  EXPECT_EQ(mmla_get_num_threads(), 1);
  ASSERT_EQ(mmla_set_num_threads(budget() + 7), MMLA_STATUS_SUCCESS);
  EXPECT_EQ(mmla_get_num_threads(), budget()) << "never more threads than CPUs";
  EXPECT_NE(std::string(mmla_get_config()).find("mmla_set_num_threads(" + std::to_string(budget() + 7) + ")"),
            std::string::npos)
      << mmla_get_config();
  ASSERT_EQ(mmla_set_num_threads(1), MMLA_STATUS_SUCCESS);
  EXPECT_EQ(mmla_set_num_threads(-2), MMLA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmla_last_error()).find("-2 is negative"), std::string::npos) << mmla_last_error();
  EXPECT_EQ(mmla_get_num_threads(), 1) << "a rejected value changes nothing";
  ASSERT_EQ(mmla_set_num_threads(0), MMLA_STATUS_SUCCESS);
  int dflt = budget();
  if (const char* e = std::getenv("MMLA_NUM_THREADS")) dflt = std::min(std::atoi(e), budget());
  EXPECT_EQ(mmla_get_num_threads(), dflt);
}

// Set by a ctest entry with MMLA_NUM_THREADS=many.
TEST_F(Threads, InvalidEnvironmentFailsEveryCall) {
  const char* e = std::getenv("MMLA_NUM_THREADS");
  if (e == nullptr || std::atoi(e) > 0) GTEST_SKIP() << "run by the ctest entry test_threads@invalid_env";
  float a = 1, b = 1, c = 5;
  EXPECT_EQ(mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, 1, 1, 1, 1, &a, 1, &b, 1, 0, &c, 1),
            MMLA_STATUS_INVALID_ENVIRONMENT);
  EXPECT_NE(std::string(mmla_last_error()).find("MMLA_NUM_THREADS"), std::string::npos) << mmla_last_error();
  EXPECT_EQ(c, 5.0f);
}

std::uint16_t bf16(float f) {
  std::uint16_t h;
  cblas_sbstobf16(1, &f, 1, &h, 1);
  return h;
}

// One GEMM of a given kind on fresh random data, checked against the double reference.
enum class Kind { f32, bf16_in, fast_math, packed, gemv_row, gemv_col };

::testing::AssertionResult run_and_check(Kind kind, std::int64_t m, std::int64_t n, std::int64_t k,
                                         std::uint32_t seed) {
  if (kind == Kind::gemv_row) m = 1;
  if (kind == Kind::gemv_col) n = 1;
  Strided a = make_matrix(m, k, true, 0, seed), b = make_matrix(k, n, true, 0, seed + 1);
  std::vector<float> c(static_cast<std::size_t>(m * n), std::numeric_limits<float>::quiet_NaN());
  std::vector<std::uint16_t> a16, b16;
  double extra = 0;  // relative error of rounding inputs to bf16
  mmla_status st = MMLA_STATUS_SUCCESS;
  if (kind == Kind::bf16_in) {  // inputs exact in bf16: the reference uses the rounded values
    for (float& v : a.data) a16.push_back(bf16(v)), cblas_sbf16tos(1, &a16.back(), 1, &v, 1);
    for (float& v : b.data) b16.push_back(bf16(v)), cblas_sbf16tos(1, &b16.back(), 1, &v, 1);
    st = mmla_sbgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, m, n, k, 1.0f, a16.data(), k, b16.data(),
                     n, 0.0f, c.data(), n);
  } else if (kind == Kind::packed) {
    mmla_packed_matrix* h = nullptr;
    st = mmla_pack_b(MMLA_ROW_MAJOR, MMLA_NO_TRANS, k, n, b.data.data(), n, &h);
    if (st == MMLA_STATUS_SUCCESS)
      st = mmla_gemm_packed(MMLA_ROW_MAJOR, MMLA_NO_TRANS, m, n, k, 1.0f, a.data.data(), k, h, 0.0f, c.data(),
                            n);
    mmla_packed_free(h);
    extra = mmla_get_fpmath_mode() == MMLA_FPMATH_BF16 ? 2 * 0x1p-8 + 0x1p-16 : 0;
  } else {
    if (kind == Kind::fast_math) {
      mmla_set_thread_fpmath_mode(MMLA_FPMATH_BF16);
      extra = 2 * 0x1p-8 + 0x1p-16;
    }
    st = mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, m, n, k, 1.0f, a.data.data(), k,
                    b.data.data(), n, 0.0f, c.data(), n);
    mmla_set_thread_fpmath_mode(MMLA_FPMATH_DEFAULT);
    if (mmla_get_fpmath_mode() == MMLA_FPMATH_BF16) extra = 2 * 0x1p-8 + 0x1p-16;
  }
  if (st != MMLA_STATUS_SUCCESS)
    return ::testing::AssertionFailure() << "status " << st << ": " << mmla_last_error();
  const Reference r = reference_gemm(
      m, n, k, 1.0f, [&](std::int64_t i, std::int64_t p) { return a.at(i, p); },
      [&](std::int64_t p, std::int64_t j) { return b.at(p, j); }, 0.0f,
      [](std::int64_t, std::int64_t) { return 0.0f; });
  return matches(
      r, [&](std::int64_t i, std::int64_t j) { return c[static_cast<std::size_t>(i * n + j)]; },
      extra + fp32_bound_factor(k, 1));
}

TEST_F(Threads, ConcurrentCallsFromEightThreadsAreCorrect) {
  // Big enough that every call wants the pool; mixed kinds so that different kernels, packers and
  // per-thread fp-math modes run at the same time.
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape shapes[] = {{96, 130, 300}, {257, 64, 200}, {40, 300, 256}, {130, 97, 513}, {300, 300, 64}};
  const Kind kinds[] = {Kind::f32,    Kind::bf16_in,  Kind::fast_math,
                        Kind::packed, Kind::gemv_row, Kind::gemv_col};
  std::atomic<int> failures{0};
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 6; ++r) {
        const Shape& s = shapes[static_cast<std::size_t>(t + r) % std::size(shapes)];
        const Kind kind = kinds[static_cast<std::size_t>(t * 5 + r) % std::size(kinds)];
        const auto res = run_and_check(kind, s.m, s.n, s.k, static_cast<std::uint32_t>(t * 100 + r));
        if (!res) {
          failures.fetch_add(1);
          errors[static_cast<std::size_t>(t)] =
              std::string("kind ") + std::to_string(static_cast<int>(kind)) + " " + std::to_string(s.m) +
              "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + ": " + res.message();
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (const std::string& e : errors)
    if (!e.empty()) ADD_FAILURE() << e;
}

TEST_F(Threads, CallsFromInsideAPoolJobDoNotDeadlock) {
  threading::Team team(2);
  std::atomic<int> ok{0};
  team.run(4, [&](int i) {
    if (run_and_check(Kind::f32, 200, 150, 300, static_cast<std::uint32_t>(i))) ok.fetch_add(1);
  });
  EXPECT_EQ(ok.load(), 4);
}

// Runs `child` in a forked process that must exit 0 within 60 s.
void expect_child_succeeds(const std::function<bool()>& child) {
#if defined(MMLA_TEST_EMULATED)
  // qemu-user 7.2 aborts when a child forked from a multi-threaded guest starts a thread
  // (qemu_plugin_vcpu_init_hook / cpu_exec assertions); the native runs test this.
  GTEST_SKIP() << "qemu-user cannot start threads in a child of a multi-threaded fork";
#endif
  const pid_t pid = fork();
  ASSERT_NE(pid, -1);
  if (pid == 0) {
    alarm(60);  // a hang kills the child with SIGALRM
    _exit(child() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's GEMM was wrong or failed";
}

TEST_F(Threads, ChildOfForkHasAWorkingPool) {
  ASSERT_TRUE(run_and_check(Kind::f32, 256, 256, 256, 1));  // the parent's pool is running
  expect_child_succeeds([] {
    if (!run_and_check(Kind::f32, 256, 256, 256, 2) || !run_and_check(Kind::gemv_row, 1, 3000, 800, 3))
      return false;
    threading::Team team(2);  // the child's own pool gives a full team whose worker takes parts
    const auto caller = std::this_thread::get_id();
    std::atomic<int> runs{0}, elsewhere{0};
    team.run(200, [&](int) {
      runs.fetch_add(1);
      if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    return team.size() == 2 && runs.load() == 200 && elsewhere.load() > 0;
  });
  ASSERT_TRUE(run_and_check(Kind::f32, 256, 256, 256, 4)) << "the parent's pool still works";
}

TEST_F(Threads, ForkWhileAnotherThreadComputes) {
#if defined(__SANITIZE_THREAD__)
  // TSan's runtime cannot start threads in a child forked while other threads run ("dup thread
  // with used id"); every other build runs this test.
  GTEST_SKIP() << "not supported by ThreadSanitizer's runtime";
#endif
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread busy([&] {
    for (std::uint32_t i = 0; !stop.load(); ++i)
      if (!run_and_check(Kind::f32, 300, 200, 300, i)) bad.fetch_add(1);
  });
  for (int i = 0; i < 5; ++i)
    expect_child_succeeds([] { return bool(run_and_check(Kind::f32, 256, 192, 256, 9)); });
  stop.store(true);
  busy.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace mmla::test
