#!/bin/bash
set -euo pipefail
cd /app
printf '%s\n' '#!/bin/bash' 'echo "Welcome, $1!"' > /app/greet.sh
chmod +x /app/greet.sh
