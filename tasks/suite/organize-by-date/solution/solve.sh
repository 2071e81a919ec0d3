#!/bin/bash
set -euo pipefail
cd /app
for f in /app/reports/*; do
  name=$(basename "$f")
  if [[ $name =~ ^report-([0-9]{4})-([0-9]{2})-[0-9]{2}\.txt$ ]]; then
    mkdir -p "/app/archive/${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
    mv "$f" "/app/archive/${BASH_REMATCH[1]}/${BASH_REMATCH[2]}/$name"
  fi
done
