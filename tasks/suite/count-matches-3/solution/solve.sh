#!/bin/bash
set -euo pipefail
cd /app
wc -l < /app/story.txt > /app/answer.txt
