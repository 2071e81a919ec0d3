#!/bin/bash
set -euo pipefail
cd /app
printf '%b\n' \
  'SOURCES := $(sort $(wildcard src/*.txt))' \
  '' \
  '.PHONY: build clean' \
  'build: build/book.txt' \
  '' \
  'build/book.txt: $(SOURCES)' \
  '\tmkdir -p build' \
  '\tcat $(SOURCES) > $@' \
  '' \
  'clean:' \
  '\trm -rf build' > /app/Makefile
