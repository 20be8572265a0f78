#include "cpu/cpu.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace mmla::cpu {
namespace {

#if defined(__x86_64__)
constexpr std::array kLevels = {Isa::ref, Isa::avx2, Isa::avx512, Isa::avx512bf16, Isa::amx};
#elif defined(__aarch64__)
constexpr std::array kLevels = {Isa::ref, Isa::neon, Isa::dotprod, Isa::bf16, Isa::i8mm, Isa::sve};
#else
constexpr std::array kLevels = {Isa::ref};
#endif

// Defaults when neither sysfs nor CPUID tells: typical of current server cores (Neoverse N1/V1,
// Zen, Ice Lake): 32 KiB L1d and 1 MiB L2 per core, an L3 slice of a few MiB.
constexpr CacheSizes kDefaultCaches{32u << 10, 1u << 20, 8u << 20, "defaults"};

// "48K" / "2048K" / "32M" as found in /sys/devices/system/cpu/cpu0/cache/index*/size.
std::size_t parse_size(const std::string& s) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return 0;
  if (*end == 'K') v <<= 10;
  if (*end == 'M') v <<= 20;
  if (*end == 'G') v <<= 30;
  return static_cast<std::size_t>(v);
}

bool read_line(const std::string& path, std::string* out) {
  std::ifstream f(path);
  return static_cast<bool>(std::getline(f, *out));
}

bool caches_from_sysfs(CacheSizes* c) {
  bool any = false;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string level, type, size;
    if (!read_line(dir + "level", &level) || !read_line(dir + "type", &type) ||
        !read_line(dir + "size", &size))
      continue;
    const std::size_t bytes = parse_size(size);
    if (bytes == 0) continue;
    if (level == "1" && (type == "Data" || type == "Unified")) c->l1d = bytes, any = true;
    if (level == "2" && type != "Instruction") c->l2 = bytes, any = true;
    if (level == "3" && type != "Instruction") c->l3 = bytes, any = true;
  }
  return any;
}

#if defined(__x86_64__)
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};
Regs cpuid(unsigned leaf, unsigned sub = 0) {
  Regs r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}
std::uint64_t xgetbv0() {
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}
bool bit(unsigned v, int n) { return (v >> n) & 1u; }

// Linux keeps AMX tile data off until the process asks for it (arch_prctl ARCH_REQ_XCOMP_PERM).
// The grant enlarges every signal frame of the process (small sigaltstack stacks then fail), so it
// is requested only when an AMX kernel is about to be used, never at detection.
bool request_amx_permission() {
  constexpr long kArchReqXcompPerm = 0x1023, kArchGetXcompPerm = 0x1022;
  constexpr int kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  unsigned long mask = 0;
  return syscall(SYS_arch_prctl, kArchGetXcompPerm, &mask) == 0 && (mask & (1ul << kXfeatureXtiledata));
}

void detect(CpuInfo* info) {
  Features& f = info->features;
  const Regs l0 = cpuid(0);
  const unsigned max_leaf = l0.a;
  // The vendor string is EBX, EDX, ECX: "GenuineIntel" / "AuthenticAMD".
  char vendor[13] = {};
  std::memcpy(vendor, &l0.b, 4), std::memcpy(vendor + 4, &l0.d, 4), std::memcpy(vendor + 8, &l0.c, 4);
  info->vendor = std::strcmp(vendor, "GenuineIntel") == 0   ? Vendor::intel
                 : std::strcmp(vendor, "AuthenticAMD") == 0 ? Vendor::amd
                                                            : Vendor::other;
  const Regs l1 = cpuid(1);
  const bool osxsave = bit(l1.c, 27);
  const std::uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;                 // SSE and AVX state
  const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;         // XTILECFG, XTILEDATA
  Regs l7, l71;
  if (max_leaf >= 7) {
    l7 = cpuid(7, 0);
    if (l7.a >= 1) l71 = cpuid(7, 1);
  }
  f.fma = os_avx && bit(l1.c, 12) && bit(l1.c, 28);
  f.avx2 = os_avx && bit(l7.b, 5);
  f.avx512f = os_avx512 && bit(l7.b, 16);
  f.avx512dq = os_avx512 && bit(l7.b, 17);
  f.avx512bw = os_avx512 && bit(l7.b, 30);
  f.avx512vl = os_avx512 && bit(l7.b, 31);
  f.avx512_vnni = os_avx512 && bit(l7.c, 11);
  f.avx512_bf16 = os_avx512 && bit(l71.a, 5);
  f.amx_tile = os_amx && bit(l7.d, 24);
  f.amx_bf16 = os_amx && bit(l7.d, 22);

  if (cpuid(0x80000000).a >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      const Regs r = cpuid(0x80000002 + i);
      std::memcpy(brand + 16 * i, &r, 16);
    }
    info->name = brand;
    const auto first = info->name.find_first_not_of(' ');
    info->name = first == std::string::npos ? "x86-64" : info->name.substr(first);
  } else {
    info->name = "x86-64";
  }
}

// CPUID leaf 4 (Intel) / 0x8000001D (AMD) describe each cache: ways * partitions * line * sets.
bool caches_from_cpuid(CacheSizes* c) {
  const bool amd = cpuid(0x80000000).a >= 0x8000001d && bit(cpuid(0x80000001).c, 22);
  const unsigned leaf = amd ? 0x8000001d : 4;
  if (!amd && cpuid(0).a < 4) return false;
  bool any = false;
  for (unsigned i = 0; i < 8; ++i) {
    const Regs r = cpuid(leaf, i);
    const unsigned type = r.a & 0x1f;  // 0 none, 1 data, 2 instruction, 3 unified
    if (type == 0) break;
    if (type == 2) continue;
    const unsigned level = (r.a >> 5) & 0x7;
    const std::size_t bytes = std::size_t{((r.b >> 22) & 0x3ff) + 1} * (((r.b >> 12) & 0x3ff) + 1) *
                              ((r.b & 0xfff) + 1) * (std::size_t{r.c} + 1);
    if (level == 1) c->l1d = bytes, any = true;
    if (level == 2) c->l2 = bytes, any = true;
    if (level == 3) c->l3 = bytes, any = true;
  }
  return any;
}
#elif defined(__aarch64__)
void detect(CpuInfo* info) {
  info->name = "aarch64";
#if defined(__linux__)
  // Bit positions from the Linux uapi <asm/hwcap.h>, stable ABI.
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  Features& f = info->features;
  f.asimd = hw & (1ul << 1);
  f.atomics = hw & (1ul << 8);
  f.asimddp = hw & (1ul << 20);
  f.sve = hw & (1ul << 22);
  f.sve2 = hw2 & (1ul << 1);
  f.i8mm = hw2 & (1ul << 13);
  f.bf16 = hw2 & (1ul << 14);
  f.sme = hw2 & (1ul << 23);
#endif
}
bool caches_from_cpuid(CacheSizes*) { return false; }
#else
void detect(CpuInfo* info) { info->name = "generic"; }
bool caches_from_cpuid(CacheSizes*) { return false; }
#endif

CpuInfo make_info() {
  CpuInfo info;
  detect(&info);
  CacheSizes c;
  if (caches_from_sysfs(&c)) {
    c.source = "sysfs";
  } else if (caches_from_cpuid(&c)) {
    c.source = "cpuid";
  }
  // Fill whatever is still unknown from the defaults, and say so.
  if (c.l1d == 0 || c.l2 == 0 || c.l3 == 0) {
    const bool none = c.l1d == 0 && c.l2 == 0 && c.l3 == 0;
    if (c.l1d == 0) c.l1d = kDefaultCaches.l1d;
    if (c.l2 == 0) c.l2 = kDefaultCaches.l2;
    if (c.l3 == 0) c.l3 = kDefaultCaches.l3;
    c.source =
        none ? "defaults" : (std::strcmp(c.source, "sysfs") == 0 ? "sysfs + defaults" : "cpuid + defaults");
  }
  info.caches = c;
  return info;
}

IsaCap make_cap() {
  IsaCap cap;
  cap.level = kLevels.back();
  const char* env = std::getenv("MMLA_ISA");
  if (env == nullptr || *env == '\0') return cap;
  cap.from_env = true;
  if (!parse(env, &cap.level)) {
    std::string known;
    for (Isa i : kLevels) known += std::string(known.empty() ? "" : ", ") + name(i);
    cap.error = std::string("MMLA_ISA=") + env + " is not an ISA level of this build (known: " + known + ")";
  }
  return cap;
}

}  // namespace

const CpuInfo& info() {
  static const CpuInfo kInfo = make_info();
  return kInfo;
}

std::span<const Isa> levels() { return kLevels; }

const char* name(Isa isa) {
  switch (isa) {
    case Isa::ref: return "ref";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::avx512bf16: return "avx512bf16";
    case Isa::amx: return "amx";
    case Isa::neon: return "neon";
    case Isa::dotprod: return "dotprod";
    case Isa::bf16: return "bf16";
    case Isa::i8mm: return "i8mm";
    case Isa::sve: return "sve";
  }
  return "?";
}

int rank(Isa isa) {
  for (std::size_t i = 0; i < kLevels.size(); ++i)
    if (kLevels[i] == isa) return static_cast<int>(i);
  return -1;
}

bool parse(const std::string& text, Isa* out) {
  for (Isa i : kLevels) {
    if (text == name(i)) {
      *out = i;
      return true;
    }
  }
  return false;
}

bool detected(Isa isa) {
  const Features& f = info().features;
  switch (isa) {
    case Isa::ref: return true;
    case Isa::avx2: return f.avx2 && f.fma;
    case Isa::avx512: return detected(Isa::avx2) && f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl;
    case Isa::avx512bf16: return detected(Isa::avx512) && f.avx512_bf16;
    case Isa::amx: return detected(Isa::avx512bf16) && f.amx_tile && f.amx_bf16;
    case Isa::neon: return f.asimd;
    case Isa::dotprod: return f.asimd && f.asimddp;
    case Isa::bf16: return f.asimd && f.bf16;
    case Isa::i8mm: return f.asimd && f.i8mm;
    case Isa::sve: return f.asimd && f.sve;
  }
  return false;
}

#if defined(__x86_64__)
namespace {
enum class AmxPermission { not_requested, granted, refused };
std::atomic<AmxPermission> g_amx_permission{AmxPermission::not_requested};
}  // namespace

bool enable(Isa isa) {
  if (isa != Isa::amx) return true;
  static const bool kGranted = [] {
    const bool ok = request_amx_permission();
    g_amx_permission = ok ? AmxPermission::granted : AmxPermission::refused;
    return ok;
  }();
  return kGranted;
}

std::string amx_status() {
  if (!detected(Isa::amx)) return "not supported by this CPU/OS";
  switch (g_amx_permission.load()) {
    case AmxPermission::granted: return "tile-data permission granted";
    case AmxPermission::refused: return "tile-data permission refused by the kernel";
    case AmxPermission::not_requested: break;
  }
  return "supported; tile-data permission not requested (no AMX kernel in use)";
}
#else
bool enable(Isa) { return true; }
std::string amx_status() { return "not an x86 build"; }
#endif

const IsaCap& cap() {
  static const IsaCap kCap = make_cap();
  return kCap;
}

bool usable(Isa isa) {
  const IsaCap& c = cap();
  const int r = rank(isa);
  return c.error.empty() && r >= 0 && r <= rank(c.level) && detected(isa) && enable(isa);
}

}  // namespace mmla::cpu
