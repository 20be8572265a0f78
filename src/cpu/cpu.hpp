// CPU feature detection, cache sizes and the ISA levels that dispatch chooses between.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace mmla::cpu {

// ISA levels of both architectures. Within one architecture the order below is the dispatch
// preference (later = preferred) and the order MMLA_ISA caps by: the one place it is written.
enum class Isa : std::uint8_t {
  ref,
  // x86-64
  avx2,
  avx512,
  avx512bf16,
  amx,
  // aarch64
  neon,
  dotprod,
  bf16,
  i8mm,
  sve,
};

// Features the CPU and the OS both support (e.g. AVX-512 needs the zmm state enabled in XCR0).
struct Features {
  // x86-64
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false;
  bool avx512_bf16 = false, avx512_vnni = false;
  bool amx_tile = false, amx_bf16 = false;
  // aarch64
  bool asimd = false, atomics = false, asimddp = false, bf16 = false, i8mm = false;
  bool sve = false, sve2 = false, sme = false;
};

struct CacheSizes {
  std::size_t l1d = 0, l2 = 0, l3 = 0;  // bytes, per instance of each cache
  const char* source = "";              // where they came from (sysfs, cpuid, defaults)
};

// Where the blocking model has measured a difference between microarchitectures (docs/blocking.md).
enum class Vendor : std::uint8_t { other, intel, amd };

struct CpuInfo {
  std::string name;  // brand string or architecture name
  Vendor vendor = Vendor::other;
  Features features;
  CacheSizes caches;
};

// Detected once, on first use; thread-safe.
const CpuInfo& info();

// The ISA levels of the architecture this library was built for, lowest (ref) first.
std::span<const Isa> levels();
const char* name(Isa isa);
int rank(Isa isa);  // position in levels(), -1 if not of this architecture

// Whether the CPU has every feature the level needs.
bool detected(Isa isa);

// The MMLA_ISA cap, read once from the environment.
struct IsaCap {
  Isa level = Isa::ref;   // highest allowed level
  bool from_env = false;  // MMLA_ISA was set
  std::string error;      // non-empty when MMLA_ISA has a value this build does not know
};
const IsaCap& cap();

// Does what the OS requires before a level's instructions may run (AMX: the Linux tile-data
// permission, requested once, on first use); false if refused. Other levels need nothing.
bool enable(Isa isa);
// One line on AMX: supported or not, permission requested or not and its outcome.
std::string amx_status();

// detected(), not above the cap, and enabled: what dispatch may use. Enables the level.
bool usable(Isa isa);

// Parses an ISA level name of this architecture; false if unknown.
bool parse(const std::string& text, Isa* out);

}  // namespace mmla::cpu
