// prefault_resident_private_memory: after a fork, the pages it write-faults take no fault when
// the calling thread writes them; pages that were not resident stay so; contents do not change.

#include "server/resident_prefault.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace zkraft::server {
namespace {

constexpr size_t kPages = 64;
constexpr size_t kTouched = 32;  // the first half is resident, the second never written

struct Region {
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  char* p = static_cast<char*>(::mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  Region() {
    for (size_t i = 0; i < kTouched; ++i) p[i * page] = static_cast<char>(i + 1);
  }
  ~Region() { ::munmap(p, kPages * page); }
  std::vector<unsigned char> resident() const {
    std::vector<unsigned char> v(kPages);
    EXPECT_EQ(::mincore(p, kPages * page, v.data()), 0);
    return v;
  }
  // Minor faults this thread takes writing the touched pages once.
  long faults_writing_touched() {
    rusage before{}, after{};
    ::getrusage(RUSAGE_THREAD, &before);
    for (size_t i = 0; i < kTouched; ++i) p[i * page] = static_cast<char>(p[i * page] + 1);
    ::getrusage(RUSAGE_THREAD, &after);
    return after.ru_minflt - before.ru_minflt;
  }
};

// fork() write-protects the parent's private pages; the child leaves at once.
void fork_and_reap() {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
}

TEST(ResidentPrefault, WithoutItEachWrittenPageFaultsOnceAfterAFork) {
  Region r;
  ASSERT_NE(r.p, MAP_FAILED);
  fork_and_reap();
  EXPECT_GE(r.faults_writing_touched(), static_cast<long>(kTouched));
}

TEST(ResidentPrefault, AfterItTheResidentPagesTakeNoFaultAndTheRestStaysAbsent) {
  Region r;
  ASSERT_NE(r.p, MAP_FAILED);
  fork_and_reap();
  std::atomic<bool> stop{false};
  const PrefaultResult done = prefault_resident_private_memory(stop);
  EXPECT_GE(done.pages, kTouched);
  EXPECT_GE(done.regions, 1u);
  EXPECT_LT(r.faults_writing_touched(), 4);
  const auto resident = r.resident();
  for (size_t i = 0; i < kPages; ++i) EXPECT_EQ(resident[i] & 1, i < kTouched ? 1 : 0) << "page " << i;
  for (size_t i = 0; i < kTouched; ++i) EXPECT_EQ(r.p[i * r.page], static_cast<char>(i + 2)) << "page " << i;
}

TEST(ResidentPrefault, StopsBeforeStartingWhenAskedTo) {
  Region r;
  ASSERT_NE(r.p, MAP_FAILED);
  fork_and_reap();
  std::atomic<bool> stop{true};
  const PrefaultResult done = prefault_resident_private_memory(stop);
  EXPECT_EQ(done.pages, 0u);
  EXPECT_EQ(done.regions, 0u);
  EXPECT_GE(r.faults_writing_touched(), static_cast<long>(kTouched));
}

}  // namespace
}  // namespace zkraft::server
