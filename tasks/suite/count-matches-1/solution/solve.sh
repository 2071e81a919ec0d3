#!/bin/bash
set -euo pipefail
cd /app
grep -c 'nina' /app/poem.txt > /app/answer.txt
