#!/bin/bash
set -euo pipefail
cd /app
cat > /app/nargs.sh <<'SCRIPT'
#!/bin/bash
echo "$#"
SCRIPT
chmod +x /app/nargs.sh
