#!/bin/bash
set -euo pipefail
cd /app
printf '\nlist:\n\techo willow > list.txt\n' >> /app/Makefile
