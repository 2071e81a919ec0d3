#!/bin/bash
set -euo pipefail
cd /app
grep -v -F 'refund' /app/emails.txt > /app/refund_lines.txt
