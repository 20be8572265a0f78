// The thread count: MMLA_NUM_THREADS, mmla_set_num_threads, or the CPUs this process may use —
// never more than those (threading::cpu_budget).
#include <atomic>
#include <cstdlib>
#include <string>

#include "api/problem.hpp"
#include "mmla/mmla.h"
#include "threading/cpus.hpp"

namespace mmla::api {
namespace {

struct EnvThreads {
  int count = 0;  // 0: unset
  std::string error;
};

const EnvThreads& env_threads() {
  static const EnvThreads kEnv = [] {
    EnvThreads e;
    const char* v = std::getenv("MMLA_NUM_THREADS");
    if (v == nullptr || *v == '\0') return e;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 1 || n > 1 << 20)
      e.error = std::string("MMLA_NUM_THREADS=") + v + " is not a positive thread count";
    else
      e.count = static_cast<int>(n);
    return e;
  }();
  return kEnv;
}

std::atomic<int> g_requested{0};  // mmla_set_num_threads; 0: not set

}  // namespace

int num_threads() {
  const int budget = threading::cpu_budget().count;
  int n = g_requested.load(std::memory_order_relaxed);
  if (n == 0) n = env_threads().count;
  return n == 0 ? budget : std::min(n, budget);
}

std::string num_threads_source() {
  const int requested = g_requested.load(std::memory_order_relaxed);
  const int n = requested != 0 ? requested : env_threads().count;
  const std::string budget = threading::cpu_budget().describe;
  if (n == 0) return "default: " + budget;
  const std::string from = requested != 0 ? "mmla_set_num_threads(" : "MMLA_NUM_THREADS=";
  return from + std::to_string(n) + (requested != 0 ? ")" : "") + "; at most " + budget;
}

const std::string& num_threads_env_error() { return env_threads().error; }

}  // namespace mmla::api

extern "C" {

MMLA_API mmla_status mmla_set_num_threads(int n) {
  mmla::api::clear_error();
  if (n < 0)
    return mmla::api::fail(
        MMLA_STATUS_INVALID_ARGUMENT,
        "mmla_set_num_threads: argument 1: " + std::to_string(n) + " is negative (0 restores the default)");
  mmla::api::g_requested.store(n, std::memory_order_relaxed);
  return MMLA_STATUS_SUCCESS;
}

MMLA_API int mmla_get_num_threads(void) { return mmla::api::num_threads(); }

}  // extern "C"
