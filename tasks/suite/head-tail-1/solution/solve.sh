#!/bin/bash
set -euo pipefail
cd /app
head -n 6 /app/journal.txt > /app/head_journal.txt
