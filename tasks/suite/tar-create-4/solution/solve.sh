#!/bin/bash
set -euo pipefail
cd /app
tar -C /app -czf /app/config.tar.gz config
