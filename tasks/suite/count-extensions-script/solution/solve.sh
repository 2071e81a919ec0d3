#!/bin/bash
set -euo pipefail
cd /app
cat > /app/extcount.sh <<'EOF'
#!/bin/bash
export LC_ALL=C
find "$1" -mindepth 1 -maxdepth 1 -type f -printf '%f\n' | while IFS= read -r name; do
  case "$name" in
    *.*) printf '%s\n' "${name##*.}" | tr 'A-Z' 'a-z' ;;
    *) echo none ;;
  esac
done | sort | uniq -c | awk '{print $2, $1}'
EOF
chmod +x /app/extcount.sh
