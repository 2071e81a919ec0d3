#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/reports
mv /app/work/report-* /app/reports/
