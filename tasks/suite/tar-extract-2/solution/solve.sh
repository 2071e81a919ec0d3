#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/data
tar -xf /app/dataset.tar -C /app/data dataset/delta.txt
