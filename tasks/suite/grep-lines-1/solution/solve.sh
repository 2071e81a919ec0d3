#!/bin/bash
set -euo pipefail
cd /app
grep -F 'TODO' /app/notes.txt > /app/todo_lines.txt
