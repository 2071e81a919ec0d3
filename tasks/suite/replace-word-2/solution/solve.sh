#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/\bcat\b/dog/g' /app/pets.md
