#include "threading/cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

namespace mmla::threading {
namespace {

bool read_file(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  *out = s.str();
  return true;
}

// "/a/b" -> {"/a/b", "/a", ""}: the cgroup and its ancestors, each a limit of its own.
std::vector<std::string> self_and_ancestors(std::string path) {
  std::vector<std::string> out;
  while (!path.empty() && path.back() == '/') path.pop_back();
  for (;;) {
    out.push_back(path);
    const std::size_t slash = path.rfind('/');
    if (path.empty() || slash == std::string::npos) break;
    path.resize(slash);
  }
  return out;
}

// A quota from cgroup v2's "cpu.max" ("max 100000" or "150000 100000"); 0 if unlimited or unreadable.
double v2_quota(const std::string& dir) {
  std::string text;
  if (!read_file(dir + "/cpu.max", &text)) return 0;
  std::istringstream s(text);
  std::string quota;
  double period = 0;
  if (!(s >> quota >> period) || quota == "max" || period <= 0) return 0;
  const double q = std::strtod(quota.c_str(), nullptr);
  return q > 0 ? q / period : 0;
}

// The same from cgroup v1's cpu.cfs_quota_us (-1 = unlimited) and cpu.cfs_period_us.
double v1_quota(const std::string& dir) {
  std::string q, p;
  if (!read_file(dir + "/cpu.cfs_quota_us", &q) || !read_file(dir + "/cpu.cfs_period_us", &p)) return 0;
  const double quota = std::strtod(q.c_str(), nullptr), period = std::strtod(p.c_str(), nullptr);
  return quota > 0 && period > 0 ? quota / period : 0;
}

double tighter(double a, double b) { return a == 0 ? b : (b == 0 ? a : std::min(a, b)); }

}  // namespace

double cgroup_cpu_quota(const std::string& proc_self_cgroup, const std::string& root) {
  double quota = 0;
  std::istringstream lines(proc_self_cgroup);
  std::string line;
  while (std::getline(lines, line)) {
    // "hierarchy-id:controllers:path"; v2 is "0::path", v1 lists its controllers.
    const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      for (const std::string& p : self_and_ancestors(path)) quota = tighter(quota, v2_quota(root + p));
      continue;
    }
    std::istringstream names(controllers);
    std::string name;
    bool cpu = false;
    while (std::getline(names, name, ',')) cpu = cpu || name == "cpu";
    if (!cpu) continue;
    // v1 mounts the cpu controller as cpu/ or, joined with cpuacct, as cpu,cpuacct/.
    for (const char* mount : {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu"})
      for (const std::string& p : self_and_ancestors(path))
        quota = tighter(quota, v1_quota(root + mount + p));
  }
  return quota;
}

const CpuBudget& cpu_budget() {
  static const CpuBudget kBudget = [] {
    CpuBudget b;
    // The kernel rejects a mask smaller than its own CPU count: grow until it fits.
    for (int cpus = 1024; cpus <= (1 << 20); cpus *= 4) {
      cpu_set_t* set = CPU_ALLOC(cpus);
      const std::size_t size = CPU_ALLOC_SIZE(cpus);
      const bool ok = set != nullptr && sched_getaffinity(0, size, set) == 0;
      if (ok) b.affinity = std::max(1, CPU_COUNT_S(size, set));
      CPU_FREE(set);
      if (ok || set == nullptr) break;
    }
    std::string text;
    if (read_file("/proc/self/cgroup", &text)) b.quota = cgroup_cpu_quota(text, "/sys/fs/cgroup");
    b.count = b.affinity;
    if (b.quota > 0) b.count = std::clamp(static_cast<int>(std::ceil(b.quota - 1e-9)), 1, b.affinity);
    std::ostringstream d;
    d << b.count << " CPU" << (b.count == 1 ? "" : "s") << " (affinity mask: " << b.affinity
      << ", cgroup CPU quota: ";
    if (b.quota > 0)
      d << b.quota;
    else
      d << "none";
    d << ")";
    b.describe = d.str();
    return b;
  }();
  return kBudget;
}

}  // namespace mmla::threading
