// Helpers shared by the CNI protocol tests (cni_env_test.cc, cni_netconf_test.cc,
// cni_result_test.cc).
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "cni/error.h"
#include "common/status.h"

namespace hcashare::cni::test_util {

// True when `haystack` contains `needle`; prints both otherwise.
inline ::testing::AssertionResult Contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << haystack << "\" does not contain \"" << needle << "\"";
}

// Asserts that `result` failed with `code` and that msg + details mention `text`, as the
// plugin prints them.
template <typename T>
::testing::AssertionResult FailsWith(const Result<T>& result, int code, const std::string& text) {
  if (result.ok()) return ::testing::AssertionFailure() << "succeeded, expected code " << code;
  const CniError e = FromStatus(result.status());
  if (e.code != code) {
    return ::testing::AssertionFailure()
           << "code " << e.code << " (" << e.msg << " / " << e.details << "), expected " << code;
  }
  return Contains(e.msg + " | " + e.details, text);
}

}  // namespace hcashare::cni::test_util
