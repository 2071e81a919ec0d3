#!/bin/bash
set -euo pipefail
cd /app
head -n 6 /app/queue.txt > /app/head_queue.txt
