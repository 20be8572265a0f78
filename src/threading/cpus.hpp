// How many CPUs this process may use: the affinity mask and the cgroup CPU quota, whichever is
// smaller. Thread counts are never larger (oversubscribing a container's quota makes GEMMs crawl).
#pragma once

#include <string>

namespace mmla::threading {

struct CpuBudget {
  int affinity = 1;      // CPUs in sched_getaffinity's mask
  double quota = 0;      // cgroup quota in CPUs (e.g. 1.5); 0 = no quota
  int count = 1;         // min(affinity, ceil(quota)), at least 1
  std::string describe;  // "2 CPUs (affinity mask: 2, cgroup quota: none)"
};

// Measured once per process, on first use.
const CpuBudget& cpu_budget();

// The tightest CPU quota on the cgroup path of this process and its ancestors, in CPUs; 0 if none.
// proc_self_cgroup: the text of /proc/self/cgroup; root: where the cgroup filesystems are mounted.
// Understands cgroup v2 (cpu.max) and v1 (cpu/cpu.cfs_quota_us, cpu.cfs_period_us). Exposed so
// tests can point it at a fake tree.
double cgroup_cpu_quota(const std::string& proc_self_cgroup, const std::string& root);

}  // namespace mmla::threading
