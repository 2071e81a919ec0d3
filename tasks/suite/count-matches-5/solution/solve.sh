#!/bin/bash
set -euo pipefail
cd /app
grep -c . /app/lyrics.txt > /app/answer.txt
