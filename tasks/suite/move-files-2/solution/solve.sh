#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/drafts
mv /app/downloads/draft_* /app/drafts/
