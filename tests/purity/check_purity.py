#!/usr/bin/python3
"""Keeps the pure folders pure and the module arrows pointing one way (ARCHITECTURE.md).

Usage: check_purity.py [SOURCE_ROOT]    check the tree (default: the repository holding this file)
       check_purity.py --self-test      plant one violation of each kind in a temporary copy and
                                        fail unless every one is reported (so this check can fail)

Prints one "file:line: message" per violation and exits 1 if there is any.

Pure code (jute/, tree/, session/ and the Raft core files in PURE_CONSENSUS) uses no clock,
thread, lock, socket, randomness, Boost or spdlog: the core and the state machines must replay
exactly from their inputs. Module arrows: jute <- tree <- session; consensus knows nothing of
ZooKeeper; only server/ wires them together.
"""

import fnmatch
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The pure Raft core: every consensus/ file matching one of these (a new file of the core belongs
# here). A pure consensus file may include only other pure consensus files.
PURE_CONSENSUS = [
    "raft_core*",
    "raft_log*",
    "messages*",
    "conf_change*",
    "progress.h",
    "read_index_queue.h",
    "ready.h",
    "types.h",
    "raft_config.h",
    "raft_status.h",
    "invariant.h",
]

# The Raft driver (the one Ready loop RaftNode and the simulation share): as pure as the core, no
# clock, randomness, I/O, Boost or spdlog, except that it may take a lock, because storage and
# snapshot completions reach it from other threads through a mutex-guarded mailbox. It may include
# the core and the other files listed here.
PURE_DRIVER = [
    "raft_driver*",
    "raft_application*",
    "status.*",
]
DRIVER_ALLOWED_HEADERS = {"mutex"}

PURE_FOLDERS = ["jute", "tree", "session"]

# Headers pure code may not include: exact names, and prefixes (folders).
FORBIDDEN_HEADERS = [
    "chrono", "thread", "mutex", "shared_mutex", "condition_variable", "future", "semaphore",
    "latch", "barrier", "stop_token", "random", "ctime", "time.h", "sys/time.h",
    "sys/socket.h", "netinet/in.h", "arpa/inet.h",
]
FORBIDDEN_HEADER_PREFIXES = ["boost/", "spdlog/", "asio/", "leveldb/"]

# Names pure code may not use (matched outside comments and string literals).
FORBIDDEN_NAMES = [
    (r"std::random_device\b", "std::random_device"),
    (r"\bsystem_clock\b", "system_clock"),
    (r"\bsteady_clock\b", "steady_clock"),
    (r"\bhigh_resolution_clock\b", "high_resolution_clock"),
    (r"std::thread\b", "std::thread"),
    (r"std::this_thread\b", "std::this_thread"),
    (r"\b(?:clock_gettime|gettimeofday)\s*\(", "a system clock call"),
    (r"(?<![\w.>])(?:std::)?time\s*\(", "time("),
    (r"(?<![\w.>])(?:std::)?rand\s*\(", "rand("),
    (r"(?<![\w.>])(?:std::)?srand\s*\(", "srand("),
]

# Which project folders each module may include from (quoted includes "<folder>/...").
MODULES = ["jute", "tree", "session", "consensus", "server", "tools", "tests"]
ALLOWED_INCLUDES = {
    "jute": {"jute"},
    "tree": {"jute", "tree"},
    "session": {"jute", "tree", "session"},
    "consensus": {"consensus"},
}

# Each low module's copy of the invariant macro; they must stay byte-identical.
INVARIANT_COPIES = ["consensus/invariant.h", "tree/invariant.h"]

SOURCE_EXTS = (".h", ".hpp", ".cc", ".cpp")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def is_pure_consensus(name):
    return any(fnmatch.fnmatch(name, p) for p in PURE_CONSENSUS)


def is_driver(name):
    return any(fnmatch.fnmatch(name, p) for p in PURE_DRIVER)


def strip_comments_and_strings(text):
    """Blanks comments and string/char literals, keeping line breaks (so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def source_files(root, folder):
    base = os.path.join(root, folder)
    for dirpath, _, files in os.walk(base):
        for f in sorted(files):
            if f.endswith(SOURCE_EXTS):
                yield os.path.relpath(os.path.join(dirpath, f), root)


def check_file(root, rel, pure, violations):
    module = rel.split(os.sep)[0]
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.split("\n")
    for no, line in enumerate(lines, 1):
        m = INCLUDE_RE.match(line)
        if not m:
            continue
        header = m.group(2)
        where = f"{rel}:{no}"
        driver = module == "consensus" and is_driver(os.path.basename(rel))
        if pure and ((header in FORBIDDEN_HEADERS and not (driver and header in DRIVER_ALLOWED_HEADERS)) or
                     any(header.startswith(p) for p in FORBIDDEN_HEADER_PREFIXES)):
            violations.append(f"{where}: pure code includes <{header}>")
        top = header.split("/")[0]
        if "/" in header and top in MODULES and module in ALLOWED_INCLUDES:
            if top not in ALLOWED_INCLUDES[module]:
                violations.append(f"{where}: {module}/ may not include {header} "
                                  f"(allowed: {', '.join(sorted(ALLOWED_INCLUDES[module]))})")
            elif pure and module == "consensus":
                target = header.split("/", 1)[1]
                if not (is_pure_consensus(target) or (driver and is_driver(target))):
                    violations.append(f"{where}: the pure Raft core includes {header}, which is not "
                                      f"in PURE_CONSENSUS" + (" or PURE_DRIVER" if driver else ""))
    if pure:
        code = strip_comments_and_strings(text).split("\n")
        for no, line in enumerate(code, 1):
            if INCLUDE_RE.match(line):
                continue
            for pattern, name in FORBIDDEN_NAMES:
                if re.search(pattern, line):
                    violations.append(f"{rel}:{no}: pure code uses {name}")


def check(root):
    violations = []
    for folder in PURE_FOLDERS + ["consensus"]:
        for rel in source_files(root, folder):
            name = os.path.basename(rel)
            pure = folder in PURE_FOLDERS or is_pure_consensus(name) or is_driver(name)
            check_file(root, rel, pure, violations)
    copies = [c for c in INVARIANT_COPIES if os.path.exists(os.path.join(root, c))]
    if copies:
        first = open(os.path.join(root, copies[0]), "rb").read()
        for c in copies[1:]:
            if open(os.path.join(root, c), "rb").read() != first:
                violations.append(f"{c}:1: differs from {copies[0]} (the copies must stay identical)")
    return violations


# (file, text appended, expected fragment of the report)
PLANTS = [
    ("jute/archive.cc", "#include <chrono>\n", "jute/archive.cc:{line}: pure code includes <chrono>"),
    ("tree/path.cc", "#include <boost/asio.hpp>\n", "pure code includes <boost/asio.hpp>"),
    ("session/session_id.cc", "static int planted() { return std::rand(); }\n", "pure code uses rand("),
    ("session/session_table.cc", "static long planted() { return std::time(nullptr); }\n",
     "pure code uses time("),
    ("consensus/raft_log.cc", "static auto planted = std::chrono::steady_clock::now();\n",
     "pure code uses steady_clock"),
    ("consensus/raft_core.cc", '#include "consensus/log_storage.h"\n', "not in PURE_CONSENSUS"),
    ("consensus/raft_core.cc", '#include "consensus/raft_driver.h"\n', "not in PURE_CONSENSUS"),
    ("consensus/raft_driver.cc", '#include "consensus/peer_transport.h"\n', "not in PURE_CONSENSUS or PURE_DRIVER"),
    ("consensus/raft_driver.cc", "#include <thread>\n", "pure code includes <thread>"),
    ("consensus/raft_core.cc", "#include <mutex>\n", "pure code includes <mutex>"),
    ("tree/acl.cc", '#include "session/session_id.h"\n', "tree/ may not include session/session_id.h"),
    ("jute/errors.cc", '#include "tree/path.h"\n', "jute/ may not include tree/path.h"),
    ("session/watch_registry.cc", '#include "server/config.h"\n', "session/ may not include server/config.h"),
    ("consensus/log_storage.cc", '#include "jute/archive.h"\n', "consensus/ may not include jute/archive.h"),
    ("tree/invariant.h", "// drift\n", "tree/invariant.h:1: differs from consensus/invariant.h"),
]


def self_test(root):
    me = os.path.abspath(__file__)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="zkraft-purity-") as tmp:
        for folder in PURE_FOLDERS + ["consensus"]:
            shutil.copytree(os.path.join(root, folder), os.path.join(tmp, folder))
        expected = []
        for rel, text, want in PLANTS:
            path = os.path.join(tmp, rel)
            with open(path, encoding="utf-8") as f:
                line = f.read().count("\n") + 1
            with open(path, "a", encoding="utf-8") as f:
                f.write(text)
            expected.append(want.format(line=line))
        run = subprocess.run([sys.executable, me, tmp], capture_output=True, text=True)
        if run.returncode != 1:
            print(f"planted violations: expected exit 1, got {run.returncode}")
            failures += 1
        for want in expected:
            if want not in run.stdout:
                print(f"planted violation not reported: {want}")
                failures += 1
    if failures:
        return 1
    print(f"self-test: all {len(PLANTS)} planted violations reported")
    return 0


def main(argv):
    default_root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test(argv[2] if len(argv) > 2 else default_root)
    root = argv[1] if len(argv) > 1 else default_root
    violations = check(root)
    for v in violations:
        print(v)
    if violations:
        print(f"{len(violations)} purity violation(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
