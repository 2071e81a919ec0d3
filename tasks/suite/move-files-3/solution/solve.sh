#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/attic
mv /app/incoming/old-* /app/attic/
