#!/bin/bash
set -euo pipefail
cd /app
wc -l < /app/draft.txt > /app/answer.txt
