#!/bin/bash
set -euo pipefail
cd /app
grep -c . /app/minutes.txt > /app/answer.txt
