#!/bin/bash
set -euo pipefail
cd /app
printf '%s\n' '#!/bin/bash' 'echo "$#"' > /app/count.sh
chmod +x /app/count.sh
