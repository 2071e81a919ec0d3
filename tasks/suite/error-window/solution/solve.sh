#!/bin/bash
set -euo pipefail
cd /app
awk '$3 == "ERROR" {t = $1 " " $2; if (!f) f = t} END {print f; print t}' /app/server.log > /app/error_window.txt
