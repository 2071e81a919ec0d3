#!/bin/bash
set -euo pipefail
cd /app
grep -c 'grace' /app/todo.txt > /app/answer.txt
