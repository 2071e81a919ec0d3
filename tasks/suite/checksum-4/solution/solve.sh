#!/bin/bash
set -euo pipefail
cd /app
cd /app && sha256sum frost-8.bin > /app/frost-8.bin.sha256
