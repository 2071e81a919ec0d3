#!/bin/bash
set -euo pipefail
cd /app
tar -C /app -czf /app/site.tar.gz site
