#!/bin/bash
set -euo pipefail
cd /app
printf '\nnotes:\n\techo solar > notes.txt\n' >> /app/Makefile
