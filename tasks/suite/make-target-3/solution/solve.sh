#!/bin/bash
set -euo pipefail
cd /app
printf '\nversion:\n\techo river > version.txt\n' >> /app/Makefile
