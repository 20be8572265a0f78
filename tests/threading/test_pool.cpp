// The thread pool (teams, nesting, concurrent callers) and the CPU budget (affinity, cgroup quota).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "threading/cpus.hpp"
#include "threading/pool.hpp"

namespace mmla::test {
namespace {

using threading::Team;

TEST(Pool, EveryPartRunsExactlyOnce) {
  for (int wanted : {1, 2, 3, 5}) {
    for (int parts : {1, 2, 3, 7, 64}) {
      for (int round = 0; round < 20; ++round) {  // the same workers, reused; offers withdrawn or taken
        Team team(wanted);
        ASSERT_GE(team.size(), 1);
        ASSERT_LE(team.size(), wanted);
        std::vector<std::atomic<int>> runs(static_cast<std::size_t>(parts));
        std::atomic<int> first_on_caller{-1};
        const auto caller = std::this_thread::get_id();
        team.run(parts, [&](int i) {
          ASSERT_GE(i, 0);
          ASSERT_LT(i, parts);
          runs[static_cast<std::size_t>(i)].fetch_add(1);
          if (i == 0) first_on_caller = std::this_thread::get_id() == caller;
          EXPECT_TRUE(threading::in_team());
        });
        for (int i = 0; i < parts; ++i)
          EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), 1) << "part " << i;
        EXPECT_EQ(first_on_caller.load(), 1) << "the caller claims part 0";
        EXPECT_FALSE(threading::in_team());
      }
    }
  }
}

TEST(Pool, WorkersTakeParts) {
  // Parts that last long enough for any sleeping worker to wake: some run off the caller's thread.
  Team team(2);
  ASSERT_EQ(team.size(), 2);
  const auto caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  team.run(200, [&](int) {
    if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_GT(elsewhere.load(), 0);
}

// Cpus_allowed_list of every thread of this process.
std::vector<std::string> thread_cpu_lists() {
  std::vector<std::string> lists;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Cpus_allowed_list:", 0) == 0) lists.push_back(line);
  }
  return lists;
}

TEST(Pool, WorkersKeepTheirCpusAfterBeingMovedOffTheCallers) {
#if defined(MMLA_TEST_EMULATED)
  GTEST_SKIP() << "qemu-user's /proc/self/task is the host's view";
#endif
  // After a sleep longer than the workers' polling, a team moves its woken workers off the caller's
  // CPU; the caller gives them their CPUs back when the team ends, so no thread is left narrowed.
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Team team(2);
    ASSERT_EQ(team.size(), 2);
    std::atomic<int> runs{0};
    team.run(50, [&](int) {
      runs.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    EXPECT_EQ(runs.load(), 50);
  }
  const std::vector<std::string> lists = thread_cpu_lists();
  ASSERT_GE(lists.size(), 2u);
  for (const std::string& l : lists) EXPECT_EQ(l, lists.front());
}

TEST(Pool, TeamStartSaysWhetherTheWorkersPoll) {
  {
    Team team(2);
    ASSERT_EQ(team.size(), 2);
    team.run(2, [](int) {});
  }
  const threading::TeamStart polling = threading::team_start();
  EXPECT_FALSE(polling.asleep);
  EXPECT_LE(polling.workers_us, 2.0);
  // Past their polling time the workers sleep: a team starts later, by what earlier cold teams
  // measured. Each cold team below measures again; the estimates stay positive and finite.
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const threading::TeamStart cold = threading::team_start();
    EXPECT_TRUE(cold.asleep);
    EXPECT_GT(cold.caller_us, 0.0);
    EXPECT_GT(cold.workers_us, polling.workers_us);
    EXPECT_LT(cold.workers_us, 1e6);
    Team team(2);
    team.run(4, [](int) { std::this_thread::sleep_for(std::chrono::microseconds(200)); });
  }
}

TEST(Pool, WantedTeamRecentlyMeansWithinThePollingTime) {
  threading::wanted_team_recently();
  EXPECT_TRUE(threading::wanted_team_recently());  // right after another: a stream of calls
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(threading::wanted_team_recently());  // after a pause: a lone call
}

TEST(Pool, AFreePoolGivesTheWholeTeam) {
  Team team(3);
  EXPECT_EQ(team.size(), 3);
}

TEST(Pool, NestedTeamsRunAlone) {
  Team outer(2);
  ASSERT_EQ(outer.size(), 2);
  std::atomic<int> inner_sizes{0}, inner_runs{0};
  outer.run(2, [&](int) {
    Team inner(4);  // from the caller (inside run) and from a worker: both alone, no deadlock
    inner_sizes.fetch_add(inner.size());
    inner.run(3, [&](int) { inner_runs.fetch_add(1); });
  });
  EXPECT_EQ(inner_sizes.load(), 2);  // both parts of the outer team, each alone
  EXPECT_EQ(inner_runs.load(), 6);
}

TEST(Pool, ConcurrentCallersNeverWaitForEachOther) {
  // 8 application threads ask for teams at once: at most one holds the pool, the rest run alone,
  // every part of every job runs exactly once.
  std::atomic<int> holders{0}, max_holders{0}, total{0}, expected{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      for (int r = 0; r < 200; ++r) {
        Team team(2);
        if (team.size() > 1) {
          const int h = holders.fetch_add(1) + 1;
          int m = max_holders.load();
          while (h > m && !max_holders.compare_exchange_weak(m, h)) {
          }
        }
        const int parts = 1 + r % 4;
        expected.fetch_add(parts);
        team.run(parts, [&](int) { total.fetch_add(1); });
        if (team.size() > 1) holders.fetch_sub(1);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(total.load(), expected.load());
  EXPECT_LE(max_holders.load(), 1);
}

TEST(CpuBudget, IsTheSmallerOfAffinityAndQuota) {
  const threading::CpuBudget& b = threading::cpu_budget();
  EXPECT_GE(b.count, 1);
  EXPECT_LE(b.count, b.affinity);
  if (b.quota > 0) {
    EXPECT_LE(b.count, static_cast<int>(b.quota) + 1);
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  EXPECT_LE(b.affinity, online);
  // Set by the ctest entry that runs this suite under `taskset -c 0`.
  if (const char* e = std::getenv("MMLA_TEST_EXPECT_CPUS")) {
    EXPECT_EQ(b.count, std::atoi(e)) << b.describe;
  }
}

// A fake cgroup tree in a temporary directory.
class FakeCgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("mmla-cgroup-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    const auto path = root_ / rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  double quota(const std::string& proc_self_cgroup) {
    return threading::cgroup_cpu_quota(proc_self_cgroup, root_.string());
  }
  std::filesystem::path root_;
};

TEST_F(FakeCgroup, V2TakesTheTightestAncestor) {
  write("cpu.max", "max 100000\n");
  write("a/cpu.max", "300000 100000\n");
  write("a/b/cpu.max", "max 100000\n");
  EXPECT_DOUBLE_EQ(quota("0::/a/b\n"), 3.0);
  write("a/b/cpu.max", "150000 100000\n");
  EXPECT_DOUBLE_EQ(quota("0::/a/b\n"), 1.5);
  EXPECT_DOUBLE_EQ(quota("0::/\n"), 0.0);  // the root says max
  write("cpu.max", "50000 100000\n");
  EXPECT_DOUBLE_EQ(quota("0::/\n"), 0.5);
}

TEST_F(FakeCgroup, V1CpuController) {
  write("cpu,cpuacct/docker/x/cpu.cfs_quota_us", "200000\n");
  write("cpu,cpuacct/docker/x/cpu.cfs_period_us", "100000\n");
  write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  EXPECT_DOUBLE_EQ(quota("4:memory:/docker/x\n3:cpu,cpuacct:/docker/x\n"), 2.0);
  EXPECT_DOUBLE_EQ(quota("3:cpu,cpuacct:/\n"), 0.0);
}

TEST_F(FakeCgroup, MissingOrMalformedFilesMeanNoQuota) {
  EXPECT_DOUBLE_EQ(quota("0::/nowhere\n"), 0.0);
  write("x/cpu.max", "garbage\n");
  EXPECT_DOUBLE_EQ(quota("0::/x\n"), 0.0);
  EXPECT_DOUBLE_EQ(quota("not a cgroup line\n"), 0.0);
  EXPECT_DOUBLE_EQ(quota(""), 0.0);
}

}  // namespace
}  // namespace mmla::test
