#!/bin/bash
set -euo pipefail
cd /app
cd /app && md5sum frost-6.iso > /app/frost-6.iso.md5
