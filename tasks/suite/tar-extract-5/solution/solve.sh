#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/restore
tar -xf /app/logs.tar -C /app/restore
