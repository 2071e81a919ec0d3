#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/\bfoo\b/bar/g' /app/example.txt
