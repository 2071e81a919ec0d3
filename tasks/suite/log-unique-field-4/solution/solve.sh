#!/bin/bash
set -euo pipefail
cd /app
awk '{print $1}' /app/firewall.log | LC_ALL=C sort -u > /app/ips.txt
