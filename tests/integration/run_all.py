#!/usr/bin/python3
"""Runs every integration suite (or the ones named) against one server and prints a summary.

    /usr/bin/python3 tests/integration/run_all.py --target zookeeper
    /usr/bin/python3 tests/integration/run_all.py --target zkraft --bin build/server/zkraft-server
    /usr/bin/python3 tests/integration/run_all.py --target zkraft --bin ... kazoo hostile

Suites: kazoo kazoo_recipes java zkcli c_client durability hostile ensemble ensemble_faults differential. Each suite runs as its own
process (as ctest runs it); its output goes to stdout as it comes.
"""

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SUITES = ["kazoo", "kazoo_recipes", "java", "zkcli", "c_client", "durability", "hostile", "ensemble", "ensemble_faults", "differential"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["zkraft", "zookeeper"], required=True)
    ap.add_argument("--bin", help="path to zkraft-server (for --target zkraft)")
    ap.add_argument("--c-client-bin", help="prebuilt c_client_test (else compiled with gcc)")
    ap.add_argument("suites", nargs="*", help="any of: " + " ".join(SUITES))
    args = ap.parse_args()
    unknown = [s for s in args.suites if s not in SUITES]
    if unknown:
        ap.error("unknown suite(s) %s; choose from %s" % (unknown, SUITES))
    env = dict(os.environ, ZK_TARGET=args.target, PYTHONDONTWRITEBYTECODE="1")
    if args.target == "zkraft":
        if not args.bin:
            ap.error("--target zkraft needs --bin")
        env["ZKRAFT_BIN"] = os.path.abspath(args.bin)
    if args.c_client_bin:
        env["C_CLIENT_BIN"] = os.path.abspath(args.c_client_bin)
    summary = []
    for suite in args.suites or SUITES:
        t0 = time.monotonic()
        print("=" * 30, suite, "=" * 30, flush=True)
        p = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "test_%s.py" % suite)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        last = ""
        for line in p.stdout:
            sys.stdout.write(line)
            if re.match(r"^\d+ passed, \d+ failed", line):
                last = line.strip()
        rc = p.wait()
        summary.append((suite, rc, last or "(no summary line)", time.monotonic() - t0))
    print("=" * 70)
    for suite, rc, last, secs in summary:
        print("%-13s %-4s %-40s %6.1fs" % (suite, "ok" if rc == 0 else "FAIL", last, secs))
    sys.exit(0 if all(rc == 0 for _, rc, _, _ in summary) else 1)


if __name__ == "__main__":
    main()
