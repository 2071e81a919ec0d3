#!/bin/bash
set -euo pipefail
cd /app
cat > /app/shout.sh <<'SCRIPT'
#!/bin/bash
printf '%s\n' "${1^^}"
SCRIPT
chmod +x /app/shout.sh
