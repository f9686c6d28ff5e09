#include "server/server_status.h"

#include <pwd.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#ifndef ZKRAFT_ZK_COMPAT_VERSION
#define ZKRAFT_ZK_COMPAT_VERSION "3.9.4"
#endif
#ifndef ZKRAFT_VERSION
#define ZKRAFT_VERSION "0.0.0"
#endif
#ifndef ZKRAFT_BUILD_DATE
#define ZKRAFT_BUILD_DATE __DATE__ " " __TIME__
#endif

namespace zkraft::server {

std::string full_version() {
  return std::string(ZKRAFT_ZK_COMPAT_VERSION) + "-zkraft-" + ZKRAFT_VERSION + ", built on " +
         ZKRAFT_BUILD_DATE + " UTC";
}

EnvironmentStatus current_environment() {
  EnvironmentStatus env;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') env.host_name = host;
  struct utsname u {};
  if (uname(&u) == 0) {
    env.os_name = u.sysname;
    // Java names x86_64 "amd64"; tools that read os.arch expect the Java spelling.
    env.os_arch = std::string(u.machine) == "x86_64" ? "amd64" : u.machine;
    env.os_version = u.release;
  }
  if (const passwd* pw = getpwuid(geteuid())) {
    env.user_name = pw->pw_name;
    env.user_home = pw->pw_dir;
  }
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  if (!ec) env.user_dir = cwd.string();
  // The JVM reports its heap; we report the machine's free and total memory and our own
  // resident size, which answer the same question an operator asks ("is memory short?").
  struct sysinfo si {};
  if (sysinfo(&si) == 0) {
    const int64_t unit = si.mem_unit == 0 ? 1 : si.mem_unit;
    env.memory_free_mb = static_cast<int64_t>(si.freeram) * unit / (1024 * 1024);
    env.memory_max_mb = static_cast<int64_t>(si.totalram) * unit / (1024 * 1024);
  }
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0, resident_pages = 0;
  if (statm >> size_pages >> resident_pages) {
    env.memory_total_mb = resident_pages * sysconf(_SC_PAGESIZE) / (1024 * 1024);
  }
  return env;
}

std::pair<int64_t, int64_t> file_descriptor_counts() {
  int64_t open = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++open;
  }
  if (open > 0) --open;  // the iterator's own descriptor
  rlimit rl{};
  int64_t max = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? static_cast<int64_t>(rl.rlim_cur) : -1;
  return {open, max};
}

}  // namespace zkraft::server
