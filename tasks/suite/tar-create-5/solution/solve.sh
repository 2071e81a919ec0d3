#!/bin/bash
set -euo pipefail
cd /app
tar -C /app -czf /app/notes.tar.gz notes
