#!/bin/bash
set -euo pipefail
cd /app
md5sum /app/solar-1.iso | cut -d' ' -f1 > /app/solar-1.iso.md5
