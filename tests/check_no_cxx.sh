#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Stands in for tests/embed_cxx (the C++ example docs/examples/embed.cpp)
# when configure found no working C++ compiler: the example is then not
# built, and the test suite says so rather than leaving it out unseen.
echo "skipped: no C++ compiler (configure found none that links a program);"
echo "install g++ (or set CXX) and run configure again to build docs/examples/embed.cpp"
exit 77
