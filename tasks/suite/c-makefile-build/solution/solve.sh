#!/bin/bash
set -euo pipefail
cd /app
printf '%b\n' \
  'hello: main.o greet.o' \
  '\tgcc -o hello main.o greet.o' \
  '' \
  '%.o: %.c greet.h' \
  '\tgcc -c -o $@ $<' \
  '' \
  '.PHONY: clean' \
  'clean:' \
  '\trm -f hello *.o' > /app/Makefile
