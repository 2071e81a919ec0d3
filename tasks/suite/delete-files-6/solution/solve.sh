#!/bin/bash
set -euo pipefail
cd /app
find /app/downloads -type f -name '*.part' -delete
