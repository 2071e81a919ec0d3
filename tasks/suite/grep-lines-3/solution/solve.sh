#!/bin/bash
set -euo pipefail
cd /app
grep -v -F 'FIXME' /app/code_review.txt > /app/fixme_lines.txt
