#!/bin/bash
set -euo pipefail
cd /app
grep -i -F 'urgent' /app/tickets.txt > /app/urgent_lines.txt
