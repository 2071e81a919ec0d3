#!/bin/bash
set -euo pipefail
cd /app
printf '%s\n' '#!/bin/bash' 'echo "Hello, $1!"' > /app/hello.sh
chmod +x /app/hello.sh
