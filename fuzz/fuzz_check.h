// Shared by the fuzz targets: FUZZ_CHECK turns a broken invariant into a crash, which is
// what libFuzzer reports and minimises.
#pragma once

#include <cstdio>
#include <cstdlib>

// Aborts with the failed condition and its location when `cond` is false.
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)
