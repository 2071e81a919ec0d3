#!/bin/bash
set -euo pipefail
cd /app
printf '%s\n' '#!/bin/bash' 'echo "$1" | tr a-z A-Z' > /app/shout.sh
chmod +x /app/shout.sh
