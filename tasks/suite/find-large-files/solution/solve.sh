#!/bin/bash
set -euo pipefail
cd /app
cat > /app/largest.sh <<'EOF'
#!/bin/bash
# Lists the N largest regular files under DIR as "<size> <relative path>".
find "$1" -type f -printf '%s %P\n' | LC_ALL=C sort -t ' ' -k1,1nr -k2 | head -n "$2"
EOF
chmod +x /app/largest.sh
