#!/bin/bash
set -euo pipefail
cd /app
tar -C /app -czf /app/photos.tar.gz photos
