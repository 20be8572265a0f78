// The fp-math mode: process default (MMLA_FPMATH_MODE, mmla_set_fpmath_mode) and per-thread override.
#include <atomic>
#include <cstdlib>
#include <string>

#include "api/problem.hpp"
#include "mmla/mmla.h"

namespace mmla::api {
namespace {

struct EnvMode {
  mmla_fpmath_mode mode = MMLA_FPMATH_STRICT;
  std::string error;
};

const EnvMode& env_mode() {
  static const EnvMode kEnv = [] {
    EnvMode e;
    const char* v = std::getenv("MMLA_FPMATH_MODE");
    if (v == nullptr || *v == '\0') return e;
    const std::string s = v;
    if (s == "strict") {
      e.mode = MMLA_FPMATH_STRICT;
    } else if (s == "bf16") {
      e.mode = MMLA_FPMATH_BF16;
    } else {
      e.error = "MMLA_FPMATH_MODE=" + s + " is not a mode (known: strict, bf16)";
    }
    return e;
  }();
  return kEnv;
}

std::atomic<mmla_fpmath_mode>& process_mode() {
  static std::atomic<mmla_fpmath_mode> mode{env_mode().mode};
  return mode;
}

thread_local mmla_fpmath_mode t_override = MMLA_FPMATH_DEFAULT;

bool valid(mmla_fpmath_mode m) { return m == MMLA_FPMATH_STRICT || m == MMLA_FPMATH_BF16; }

}  // namespace

mmla_fpmath_mode fpmath_mode() {
  return t_override != MMLA_FPMATH_DEFAULT ? t_override : process_mode().load();
}

const std::string& fpmath_env_error() { return env_mode().error; }

}  // namespace mmla::api

extern "C" {

MMLA_API mmla_status mmla_set_fpmath_mode(mmla_fpmath_mode mode) {
  mmla::api::clear_error();
  if (!mmla::api::valid(mode))
    return mmla::api::fail(MMLA_STATUS_INVALID_ARGUMENT,
                           "mmla_set_fpmath_mode: argument 1: " + std::to_string(static_cast<int>(mode)) +
                               " is not MMLA_FPMATH_STRICT or MMLA_FPMATH_BF16");
  mmla::api::process_mode().store(mode);
  return MMLA_STATUS_SUCCESS;
}

MMLA_API mmla_fpmath_mode mmla_get_fpmath_mode(void) { return mmla::api::fpmath_mode(); }

MMLA_API mmla_status mmla_set_thread_fpmath_mode(mmla_fpmath_mode mode) {
  mmla::api::clear_error();
  if (mode != MMLA_FPMATH_DEFAULT && !mmla::api::valid(mode))
    return mmla::api::fail(MMLA_STATUS_INVALID_ARGUMENT, "mmla_set_thread_fpmath_mode: argument 1: " +
                                                             std::to_string(static_cast<int>(mode)) +
                                                             " is not a mode");
  mmla::api::t_override = mode;
  return MMLA_STATUS_SUCCESS;
}

MMLA_API mmla_fpmath_mode mmla_get_thread_fpmath_mode(void) { return mmla::api::t_override; }

}  // extern "C"
