#pragma once
// ZKRAFT_INVARIANT(cond) / ZKRAFT_INVARIANT(cond, "why it matters"): a check that stays on in
// every build type. Unlike assert(), NDEBUG does not remove it. On failure it prints
//   <file>:<line>: invariant failed: <cond>[: <why>]
// to stderr and calls std::abort(), so the process stops before it writes, sends or applies
// anything built on the broken state (a replica that carries on past one can lose data).
//
// Use it for what the code itself guarantees (a failure is a bug here), never for bad input,
// which is an error value. The message must be a string literal. Keep conditions O(1) on hot
// paths.
//
// Each low module holds a byte-identical copy of this header (consensus/invariant.h,
// tree/invariant.h), so that none depends on another module for it; tests/purity checks that
// the copies stay identical. The #ifndef lets two copies meet in one translation unit.

#include <cstdio>
#include <cstdlib>

#ifndef ZKRAFT_INVARIANT
#define ZKRAFT_INVARIANT(cond, ...)                                                          \
  do {                                                                                       \
    if (!(cond)) [[unlikely]] {                                                              \
      std::fprintf(stderr, "%s:%d: invariant failed: %s%s%s\n", __FILE__, __LINE__, #cond,   \
                   "" __VA_OPT__(": "), "" __VA_OPT__(__VA_ARGS__));                         \
      std::abort();                                                                          \
    }                                                                                        \
  } while (false)
#endif
