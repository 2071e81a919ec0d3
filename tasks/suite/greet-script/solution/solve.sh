#!/bin/bash
set -euo pipefail
cd /app
cat > /app/greet.sh <<'EOF'
#!/bin/bash
echo "Hello, ${1:-world}!"
EOF
chmod +x /app/greet.sh
