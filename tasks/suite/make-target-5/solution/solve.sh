#!/bin/bash
set -euo pipefail
cd /app
printf '\nstamp:\n\techo frost > stamp.txt\n' >> /app/Makefile
