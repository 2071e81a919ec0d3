#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR == 1 || $2 == "eu"' /app/servers.csv > /app/eu.csv
