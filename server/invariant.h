#pragma once
// ZKRAFT_INVARIANT(cond, what): a check that stays on in release builds, for invariants whose
// breach would lose data or misorder replies. Logs file:line and `what`, then aborts.

#include <cstdio>
#include <cstdlib>

#define ZKRAFT_INVARIANT(cond, what)                                                      \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: invariant violated: %s (%s)\n", __FILE__, __LINE__,   \
                   #cond, what);                                                          \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)
