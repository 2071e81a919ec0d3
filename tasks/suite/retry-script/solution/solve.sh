#!/bin/bash
set -euo pipefail
cd /app
cat > /app/retry.sh <<'EOF'
#!/bin/bash
if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ]; then
  echo "usage: retry.sh N CMD [ARG...]" >&2
  exit 2
fi
n=$1
shift
status=1
for ((i = 1; i <= n; i++)); do
  "$@"
  status=$?
  [ "$status" -eq 0 ] && exit 0
done
exit "$status"
EOF
chmod +x /app/retry.sh
