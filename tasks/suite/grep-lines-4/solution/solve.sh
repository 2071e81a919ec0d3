#!/bin/bash
set -euo pipefail
cd /app
grep -F 'deprecated' /app/changelog.txt > /app/deprecated_lines.txt
