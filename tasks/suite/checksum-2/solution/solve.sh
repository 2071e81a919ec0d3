#!/bin/bash
set -euo pipefail
cd /app
cd /app && sha256sum willow-5.iso > /app/willow-5.iso.sha256
