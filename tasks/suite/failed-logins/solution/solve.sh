#!/bin/bash
set -euo pipefail
cd /app
grep -oE 'Failed password for (invalid user )?[^ ]+' /app/auth.log | awk '{print $NF}' | sort | uniq -c \
  | awk '$1 >= 3 {print $2}' | sort > /app/suspects.txt
