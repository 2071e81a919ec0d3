#!/bin/bash
set -euo pipefail
cd /app
tr 'a-z' 'A-Z' < /app/words.txt > /app/shout.txt
