#!/bin/bash
set -euo pipefail
cd /app
printf '%s\n' '#!/bin/bash' 'echo $(( $1 + $2 ))' > /app/add.sh
chmod +x /app/add.sh
