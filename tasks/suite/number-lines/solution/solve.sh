#!/bin/bash
set -euo pipefail
cd /app
awk '{print NR ": " $0}' /app/todo.txt > /app/numbered.txt
