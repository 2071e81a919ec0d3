#!/bin/bash
set -euo pipefail
cd /app
printf '%s\n' '#!/bin/bash' 'echo "$1"' > /app/first.sh
chmod +x /app/first.sh
