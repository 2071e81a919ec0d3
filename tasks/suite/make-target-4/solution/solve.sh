#!/bin/bash
set -euo pipefail
cd /app
printf '\ndocs:\n\techo umber > docs.txt\n' >> /app/Makefile
