#!/bin/bash
set -euo pipefail
cd /app
grep -oE '[A-Za-z0-9._+-]+@[A-Za-z0-9.-]+\.[A-Za-z]+' /app/messages.txt | tr 'A-Z' 'a-z' | LC_ALL=C sort -u > /app/emails.txt
