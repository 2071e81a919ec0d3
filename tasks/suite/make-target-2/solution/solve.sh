#!/bin/bash
set -euo pipefail
cd /app
printf '\nhello:\n\techo harbor > hello.txt\n' >> /app/Makefile
