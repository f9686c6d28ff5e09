#!/usr/bin/env bash
# Installs the Debian 12 packages zkraft builds and tests with; installs only what is missing.
set -euo pipefail
pkgs=(
  build-essential cmake pkg-config
  libboost-dev libboost-system-dev libleveldb-dev libspdlog-dev libyaml-cpp-dev
  libjemalloc-dev  # zkraft-server's malloc (CMakeLists.txt, ZKRAFT_JEMALLOC)
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libssl-dev
  clang libclang-rt-14-dev
  python3-kazoo zookeeper libzookeeper-mt-dev libzookeeper-java
  libcurator-framework-java libcurator-recipes-java libcurator-client-java
  libjetty9-java libservlet-api-java  # ZooKeeper's AdminServer in tests/integration/test_admin.py
  chromium  # headless, for the dashboard in tests/integration/test_dashboard.py
  zktop  # tests/integration/test_four_letter_tools.py drives it
  libsasl2-dev libsasl2-modules  # Cyrus SASL: DIGEST-MD5 (server/sasl_server.h)
  libsasl2-modules-gssapi-mit krb5-kdc krb5-admin-server krb5-user python3-kerberos  # GSSAPI, and the test KDC
  python3-pure-sasl  # Kazoo's SASL client in tests/integration/test_sasl.py
  default-jdk-headless netcat-openbsd procps iproute2
  openssl  # tests/integration/test_tls.py makes its certificates with the openssl command
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
