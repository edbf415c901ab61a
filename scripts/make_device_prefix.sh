#!/usr/bin/env bash
# Packs what the H200 device image lacks for building attnbench into .carry/pfx/prefix.tgz (about 1 MB), from
# this machine's Debian packages: fast-cpp-csv-parser (libfccp/csv.h), toml++ and nlohmann json headers (json's
# cmake config with them), RE2's headers and shared library, and GoogleTest / GoogleMock (headers, static
# libraries and their cmake config, so that the test binary links against the headers it was compiled with).
# The device scripts (scripts/h200_ncu.sh, scripts/hopper_device_check.sh) unpack it into .carry/prefix when a
# call carries ".carry/pfx"; hopper_device_check.sh's cmake line shows how the prefix is used.
# Usage (repository root, here): scripts/make_device_prefix.sh        (.carry/ is git-ignored)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_packages.sh libfccp-dev libtomlplusplus-dev libre2-dev nlohmann-json3-dev libgtest-dev libgmock-dev
arch_lib=/usr/lib/$(gcc -dumpmachine)
out=.carry/prefix
rm -rf "$out"
mkdir -p "$out/include" "$out/lib/$(gcc -dumpmachine)/cmake" "$out/share/cmake"
cp -r /usr/include/libfccp /usr/include/toml++ /usr/include/re2 /usr/include/nlohmann /usr/include/gtest \
  /usr/include/gmock "$out/include/"
cp -a "$arch_lib"/libre2.so* "$out/lib/"
cp "$arch_lib"/libgtest.a "$arch_lib"/libgtest_main.a "$arch_lib"/libgmock.a "$arch_lib"/libgmock_main.a \
  "$out/lib/$(gcc -dumpmachine)/"
# GTest's config finds its prefix four folders above itself: lib/<triplet>/cmake/GTest -> the prefix.
cp -r "$arch_lib/cmake/GTest" "$out/lib/$(gcc -dumpmachine)/cmake/"
cp -r /usr/share/cmake/nlohmann_json "$out/share/cmake/"
mkdir -p .carry/pfx
tar -C .carry -czf .carry/pfx/prefix.tgz prefix
echo "make_device_prefix: .carry/pfx/prefix.tgz ($(du -h .carry/pfx/prefix.tgz | cut -f1)); carry \".carry/pfx\""
